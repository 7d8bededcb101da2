// End to end with the real clients, AI SDK 6: @ai-sdk/openai v3 (chat and Responses) and
// @ai-sdk/anthropic v3 against the local provider server, generateText and streamText.
// The ai7 vitest project excludes test/e2e/**; the AI SDK 7 matrix is clients-ai7.test.ts.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import * as ai from 'ai';
import { describeClientMatrix } from './scenario';

describeClientMatrix({
  label: 'ai@6, @ai-sdk v3 clients',
  ai,
  clients: { createOpenAI, createAnthropic },
  major: 6,
  steps: 150,
  overflowSteps: 60,
});
