/**
 * A polling loop's lifecycle: `start` runs it (once; again after a stop), `stop` asks it to end,
 * calls `interrupt` to cut short what it waits on, and resolves once the round in progress is over.
 */
export const stoppableLoop = (run: (stopping: () => boolean) => Promise<void>, interrupt: () => void) => {
  let loop: Promise<void> | undefined;
  let stopping = false;
  return {
    start: () => {
      if (loop) return;
      stopping = false;
      loop = run(() => stopping);
    },
    stop: async () => {
      stopping = true;
      interrupt();
      await loop;
      loop = undefined;
    },
  };
};
