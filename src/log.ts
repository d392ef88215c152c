/** The logging facade lives in ops/log.ts; this path stays so that existing imports keep working. */
export { log } from './ops/log';
