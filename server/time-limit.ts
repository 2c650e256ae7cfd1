// A time limit on a promise that cannot be cancelled (an RPC call, a message to another process): the caller stops
// waiting, the work goes on unheeded.

/** A wait that ran out. */
export class TimedOut extends Error {}

/** `promise`, or a TimedOut rejection once `ms` have passed without it settling (it goes on, unheeded). */
export async function within<T>(ms: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
