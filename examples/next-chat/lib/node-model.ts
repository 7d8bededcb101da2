import { chatModel } from './model';
import { storeFromEnvironment } from './redis';

/** The model of the Node.js route handler and the server action: one instance, its checkpoints in Redis when `REDIS_URL` is set. */
export const model = chatModel({ store: storeFromEnvironment() });
