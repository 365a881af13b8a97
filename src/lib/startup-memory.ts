import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * One full collection a moment after the server listens, of the kind V8 runs before
 * giving up on memory ("last resort"): it also gives back the young generation V8
 * grew to 16 MB while starting (the documents, validators and modules it built),
 * which an idle process otherwise keeps. About 10 MB of idle RSS; the collection
 * itself takes a few tens of milliseconds, once. Capping the young generation instead
 * (--max-semi-space-size=2) gave the same memory back but made the intake's collector
 * time five times larger.
 */
export function releaseStartupMemory(delayMs = 2000): void {
  const timer = setTimeout(() => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as ((options?: object) => void) | undefined;
    gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  }, delayMs);
  timer.unref();
}
