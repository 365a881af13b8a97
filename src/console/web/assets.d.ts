/** Images imported by the app are emitted by esbuild as hashed files; the import is their URL. */
declare module '*.svg' {
  const url: string;
  export default url;
}
