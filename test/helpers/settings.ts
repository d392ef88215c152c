/**
 * What every service a test starts runs with, in process (app.ts) or built (service.ts), unless the
 * test sets it itself; only where it matters, so that the start line's "settings read" stays the test's.
 *
 * SHADOW_COPIER_PRIORITY=normal where shadowing is on: jest runs suites side by side and keeps both
 * processors busy, and a copier at the lowest priority (the default, SCHED_IDLE) waits for processor
 * time nobody else wants, which may not come for tens of seconds: its copies would then settle by
 * the machine's load rather than by the code. test/shadow.test.ts checks the default.
 */
export function withTestSettings<T extends Record<string, string | undefined>>(env: T): T {
  const shadowing = env.SHADOW_URL !== undefined && env.SHADOW_URL !== '';
  return shadowing && env.SHADOW_COPIER_PRIORITY === undefined ? { ...env, SHADOW_COPIER_PRIORITY: 'normal' } : env;
}
