import type { Server } from 'node:net';

/** Connections a test server accepted: open now, the most open at once, and all of them. */
export interface ConnectionCount {
  readonly open: number;
  readonly peak: number;
  readonly opened: number;
  /** Starts the peak again from what is open now. */
  resetPeak(): void;
}

/** Counts the connections `server` accepts from now on (an outbound cap is checked where the connections arrive). */
export function countConnections(server: Server): ConnectionCount {
  let open = 0;
  let peak = 0;
  let opened = 0;
  server.on('connection', (socket) => {
    opened++;
    open++;
    peak = Math.max(peak, open);
    socket.on('close', () => open--);
  });
  return {
    get open() {
      return open;
    },
    get peak() {
      return peak;
    },
    get opened() {
      return opened;
    },
    resetPeak() {
      peak = open;
    },
  };
}
