import type { Store } from '../../src/store/store';

/**
 * The AuthCodes waiting to be sent, oldest first, read as the dispatcher reads them: claimed (all
 * due, whatever their age), then given back untouched. Only for a store no dispatcher is working on.
 */
export async function queued(store: Store, limit = 100): Promise<{ code: string; phone: string }[]> {
  const now = new Date();
  const claimed = await store.outbox.claimDue('test-reader', now, new Date(now.getTime() + 60_000), limit, new Date(0));
  for (const m of claimed) await store.outbox.release(m.id, 'test-reader');
  return claimed.map(({ code, phone }) => ({ code, phone }));
}

/** How many AuthCodes wait to be sent. */
export async function pendingCount(store: Store): Promise<number> {
  return (await store.outbox.counts()).pending;
}
