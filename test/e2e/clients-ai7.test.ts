// End to end with the real clients, AI SDK 7: @ai-sdk/openai v4 (chat and Responses) and
// @ai-sdk/anthropic v4 against the local provider server, generateText and streamText. It imports
// ai@7 by name and runs in the ai7 vitest project, where the package's own imports of `ai` are ai@7.
import { createAnthropic } from 'anthropic4';
import { createOpenAI } from 'openai4';
import { convertToModelMessages, generateText, readUIMessageStream, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai7';
import { describeClientMatrix } from './scenario';

describeClientMatrix({
  label: 'ai@7, @ai-sdk v4 clients',
  ai: { generateText, streamText, wrapLanguageModel, tool, stepCountIs, convertToModelMessages, readUIMessageStream },
  clients: { createOpenAI, createAnthropic },
  major: 7,
  steps: 150,
  overflowSteps: 60,
});
