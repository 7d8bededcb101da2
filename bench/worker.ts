/** A child process of pool.ts: runs the pieces it is sent, one at a time, and answers each. */
import type { PieceReply, PieceRequest } from './pool';

process.on('message', async (message: PieceRequest) => {
  let reply: PieceReply;
  try {
    const module = (await import(message.module)) as Record<string, (task: unknown) => Promise<unknown>>;
    const piece = module[message.name];
    if (typeof piece !== 'function') throw new Error(`${message.module} exports no function ${message.name}`);
    const cpu = process.cpuUsage();
    const start = performance.now();
    const result = await piece(message.task);
    const used = process.cpuUsage(cpu);
    reply = { id: message.id, result, cpuMs: (used.user + used.system) / 1_000, wallMs: performance.now() - start };
  } catch (error) {
    reply = { id: message.id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
  process.send!(reply);
});
