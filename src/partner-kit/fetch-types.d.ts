// The generated fetch client names `BodyInit`, a DOM type that Node's types keep in
// undici-types rather than as a global; Lumen compiles without the DOM library.
type BodyInit = import('undici-types').BodyInit;
