/**
 * The local provider server of test/support/provider-server/ in this process, on a benchmark's
 * virtual clock (clock.ts): its handler is the OpenAI client's `fetch`, so no request leaves the
 * process and the clock sees every piece of work in flight; its pace (`speed`) and its prompt
 * cache's expiry run on the clock.
 *
 *   const clock = virtualClock();
 *   const provider = localProvider({ contextWindow, seed, agent, speed, clock });
 *   const model = provider.openai.chat('local-coding-agent');
 *   ... provider.requests ...
 */
import { createOpenAI, type OpenAIProvider } from '@ai-sdk/openai';
import { createProvider, IN_PROCESS_URL, type Provider, type ProviderServerOptions, type Speed } from '../test/support/provider-server';
import type { VirtualClock } from './clock';

/** The provider in process, and an OpenAI client whose requests it answers. */
export function localProvider(options: Omit<ProviderServerOptions, 'port' | 'host'> & { clock: VirtualClock }): Provider & { openai: OpenAIProvider } {
  const provider = createProvider(options);
  return { ...provider, openai: createOpenAI({ baseURL: IN_PROCESS_URL, apiKey: 'local', fetch: provider.fetch }) };
}

/**
 * A real model's speed, the pace of every paced benchmark: 5,000 prompt tokens a second (those read
 * from the prompt cache take no time) and 60 output tokens a second. A summary of ~800 tokens then
 * takes about 14 s.
 */
export const SPEED: Speed = { promptTokensPerSecond: 5_000, outputTokensPerSecond: 60 };
