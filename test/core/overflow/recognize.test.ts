/// <reference types="vite/client" />
import { APICallError, RetryError } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  contextOverflowKind,
  contextOverflowLimit,
  isContextOverflowError,
  overflowFromStreamPart,
  promptTokensFromOverflow,
} from '../../../src/overflow/recognize';

interface OverflowFixture {
  provider: string;
  statusCode: number;
  body: unknown;
  message: string;
  overflow: boolean;
  limit: number | null;
  promptTokens: number | null;
  kind: 'context' | 'request-size' | null;
}

const fixtureModules = import.meta.glob<OverflowFixture>('../../../fixtures/overflow/*.json', {
  eager: true,
  import: 'default',
});

const fixtures = Object.entries(fixtureModules)
  .map(([path, fixture]) => ({ name: path.slice(path.lastIndexOf('/') + 1, -'.json'.length), fixture }))
  .sort((a, b) => a.name.localeCompare(b.name));

const overflowFixtures = fixtures.filter(({ fixture }) => fixture.overflow);
const otherFixtures = fixtures.filter(({ fixture }) => !fixture.overflow);

/** The error exactly as `createJsonErrorResponseHandler` in `@ai-sdk/provider-utils` builds it. */
function apiCallError({ message, statusCode, body }: OverflowFixture): APICallError {
  return new APICallError({
    message,
    url: 'https://api.example.com/v1',
    requestBodyValues: {},
    statusCode,
    responseHeaders: {},
    responseBody: typeof body === 'string' ? body : JSON.stringify(body),
    data: typeof body === 'object' ? body : undefined,
    isRetryable: statusCode === 429 || statusCode >= 500,
  });
}

function gatewayError(cause: unknown): Error {
  return Object.assign(new Error('Invalid request', { cause }), {
    name: 'GatewayInvalidRequestError',
    type: 'invalid_request_error',
    statusCode: 400,
  });
}

function expectFixture(error: unknown, fixture: OverflowFixture): void {
  expect({
    overflow: isContextOverflowError(error),
    limit: contextOverflowLimit(error) ?? null,
    promptTokens: promptTokensFromOverflow(error) ?? null,
    kind: contextOverflowKind(error) ?? null,
  }).toEqual({
    overflow: fixture.overflow,
    limit: fixture.limit,
    promptTokens: fixture.promptTokens,
    kind: fixture.kind,
  });
}

function chain(depth: number, innermost: unknown): unknown {
  let error = innermost;
  for (let level = 0; level < depth; level++) error = new Error(`level ${level}`, { cause: error });
  return error;
}

describe('overflow recognition', () => {
  it('should load every fixture', () => {
    expect(fixtures.length).toBe(47);
    expect(overflowFixtures.length).toBe(37);
  });

  describe('APICallError built from a fixture', () => {
    it.each(fixtures)('should classify $name as the fixture says', ({ fixture }) => {
      expectFixture(apiCallError(fixture), fixture);
    });
  });

  describe('RetryError', () => {
    it.each(fixtures)('should classify $name inside a RetryError as the fixture says', ({ fixture }) => {
      const error = new RetryError({
        message: 'Failed after 3 attempts',
        reason: 'maxRetriesExceeded',
        errors: [apiCallError(fixture), apiCallError(fixture)],
      });
      expectFixture(error, fixture);
    });

    it('should decide by the last error when the attempts disagree', () => {
      const [overflow] = overflowFixtures;
      const rateLimit = fixtures.find(({ name }) => name === 'openai-429-tokens-per-min');
      const errors = [apiCallError(overflow!.fixture), apiCallError(rateLimit!.fixture)];
      const error = new RetryError({ message: 'Failed after 2 attempts', reason: 'maxRetriesExceeded', errors });
      expect(isContextOverflowError(error)).toBe(false);
    });

    it('should read a RetryError-shaped object without the class', () => {
      const fixture = fixtures.find(({ name }) => name === 'anthropic-prompt-too-long')!.fixture;
      const error = { name: 'AI_RetryError', message: 'Failed after 3 attempts', errors: [apiCallError(fixture)] };
      expect(isContextOverflowError(error)).toBe(true);
      expect(contextOverflowLimit(error)).toBe(200000);
      expect(promptTokensFromOverflow(error)).toBe(208656);
    });
  });

  describe('gateway wrapper', () => {
    it.each(fixtures)('should classify $name inside a GatewayInvalidRequestError as the fixture says', ({ fixture }) => {
      expectFixture(gatewayError(apiCallError(fixture)), fixture);
    });

    it('should read the limit from the upstream error when the gateway message states none', () => {
      const fixture = fixtures.find(({ name }) => name === 'openai-chat-context-length-exceeded')!.fixture;
      const error = Object.assign(new Error('Your input exceeds the context window of this model.', { cause: apiCallError(fixture) }), {
        name: 'GatewayInvalidRequestError',
        statusCode: 400,
      });
      expect(isContextOverflowError(error)).toBe(true);
      expect(contextOverflowLimit(error)).toBe(128000);
      expect(promptTokensFromOverflow(error)).toBe(130412);
    });

    it('should not treat a gateway rate-limit error as overflow', () => {
      const error = Object.assign(new Error('Too many tokens in flight'), {
        name: 'GatewayRateLimitError',
        type: 'rate_limit_exceeded',
        statusCode: 400,
      });
      expect(isContextOverflowError(error)).toBe(false);
    });
  });

  describe('cause chain', () => {
    it.each(fixtures)('should classify $name at the end of an Error cause chain as the fixture says', ({ fixture }) => {
      expectFixture(chain(3, apiCallError(fixture)), fixture);
    });

    it('should find an overflow 8 levels down', () => {
      const error = chain(8, new Error('prompt is too long: 208656 tokens > 200000 maximum'));
      expect(isContextOverflowError(error)).toBe(true);
      expect(contextOverflowLimit(error)).toBe(200000);
    });

    it('should stop walking after 8 levels', () => {
      expect(isContextOverflowError(chain(20, new Error('prompt is too long: 208656 tokens > 200000 maximum')))).toBe(false);
    });

    it('should terminate on a cyclic cause chain with no overflow', () => {
      const first = new Error('first');
      const second = new Error('second', { cause: first });
      (first as { cause?: unknown }).cause = second;
      expect(isContextOverflowError(first)).toBe(false);
      expect(contextOverflowLimit(first)).toBeUndefined();
    });

    it('should terminate on a cyclic cause chain that holds an overflow', () => {
      const overflow = new Error('This model\'s maximum context length is 128000 tokens.');
      const wrapper = new Error('wrapper', { cause: overflow });
      (overflow as { cause?: unknown }).cause = wrapper;
      expect(isContextOverflowError(wrapper)).toBe(true);
      expect(contextOverflowLimit(wrapper)).toBe(128000);
    });

    it('should terminate on a RetryError-shaped object that contains itself', () => {
      const error: { message: string; name: string; errors: unknown[]; lastError?: unknown } = {
        name: 'AI_RetryError',
        message: 'Failed after 2 attempts',
        errors: [],
      };
      error.errors.push(error);
      error.lastError = error;
      expect(isContextOverflowError(error)).toBe(false);
    });
  });

  describe('overflowFromStreamPart', () => {
    it('should recognise an OpenAI-compatible raw error object', () => {
      const error = {
        error: {
          code: 'context_length_exceeded',
          message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.",
        },
      };
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(true);
      expect(contextOverflowLimit(error)).toBe(128000);
      expect(promptTokensFromOverflow(error)).toBe(130412);
    });

    it('should recognise an Anthropic error event', () => {
      const error = {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 208656 tokens > 200000 maximum' },
      };
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(true);
      expect(contextOverflowKind(error)).toBe('context');
      expect(contextOverflowLimit(error)).toBe(200000);
    });

    it('should recognise a Google error object', () => {
      const error = {
        error: {
          code: 400,
          message: 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).',
          status: 'INVALID_ARGUMENT',
        },
      };
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(true);
      expect(contextOverflowLimit(error)).toBe(1048576);
      expect(promptTokensFromOverflow(error)).toBe(1200293);
    });

    it('should recognise a Bedrock validationException', () => {
      expect(overflowFromStreamPart({ type: 'error', error: { message: 'Input is too long for requested model.' } })).toBe(true);
    });

    it('should not recognise a Bedrock throttlingException', () => {
      const error = { message: 'Too many tokens, please wait before trying again.' };
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(false);
    });

    it('should recognise an OpenAI Responses response.failed event by response.error.code', () => {
      const error = {
        type: 'response.failed',
        response: { error: { code: 'context_length_exceeded', message: 'Input too large.' } },
      };
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(true);
    });

    it('should recognise a code in exception.type', () => {
      const error = { exception: { type: 'model_context_window_exceeded' } };
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(true);
    });

    it('should recognise a code in error.type and error.status', () => {
      expect(overflowFromStreamPart({ type: 'error', error: { error: { type: 'context_length_exceeded' } } })).toBe(true);
      expect(overflowFromStreamPart({ type: 'error', error: { error: { status: 'context_length_exceeded' } } })).toBe(true);
    });

    it('should recognise a string error and an Error', () => {
      expect(overflowFromStreamPart({ type: 'error', error: 'prompt is too long: 208656 tokens > 200000 maximum' })).toBe(true);
      expect(overflowFromStreamPart({ type: 'error', error: new Error('the request exceeds the available context size, try increasing it') })).toBe(true);
    });

    it('should recognise a JSON string error', () => {
      const error = JSON.stringify({ error: { code: 'context_length_exceeded', message: 'Too long.' } });
      expect(overflowFromStreamPart({ type: 'error', error })).toBe(true);
    });

    it('should not recognise rate limits and overloads in stream parts', () => {
      const groqTpm = {
        error: {
          message:
            'Request too large for model `llama-3.3-70b-versatile` on tokens per minute (TPM): Limit 12000, Requested 15211, please reduce your message size and try again.',
          type: 'tokens',
          code: 'rate_limit_exceeded',
        },
      };
      const anthropicOverloaded = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
      const googleExhausted = { error: { code: 429, message: 'Too many tokens this minute.', status: 'RESOURCE_EXHAUSTED' } };
      expect(overflowFromStreamPart({ type: 'error', error: groqTpm })).toBe(false);
      expect(overflowFromStreamPart({ type: 'error', error: anthropicOverloaded })).toBe(false);
      expect(overflowFromStreamPart({ type: 'error', error: googleExhausted })).toBe(false);
    });

    it('should ignore parts that are not error parts', () => {
      expect(overflowFromStreamPart({ type: 'text-delta', error: 'prompt is too long' })).toBe(false);
      expect(overflowFromStreamPart({ type: 'finish' })).toBe(false);
      expect(overflowFromStreamPart({ type: 'error' })).toBe(false);
    });
  });

  describe('aborts', () => {
    it('should never treat an AbortError as overflow', () => {
      const error = Object.assign(new Error('prompt is too long: 208656 tokens > 200000 maximum'), { name: 'AbortError' });
      expect(isContextOverflowError(error)).toBe(false);
      expect(contextOverflowKind(error)).toBeUndefined();
    });

    it('should never treat a DOMException abort or timeout as overflow', () => {
      expect(isContextOverflowError(new DOMException('This operation was aborted', 'AbortError'))).toBe(false);
      expect(isContextOverflowError(new DOMException('The operation timed out.', 'TimeoutError'))).toBe(false);
    });

    it('should never treat an abort wrapping an overflow as overflow', () => {
      const error = new DOMException('context_length_exceeded', 'AbortError');
      expect(isContextOverflowError(error)).toBe(false);
      expect(isContextOverflowError(new Error('step failed', { cause: error }))).toBe(false);
    });
  });

  describe('non-errors', () => {
    it.each([undefined, null, 0, 413, true, '', 'Bad Request', {}, []])('should return nothing for %j', value => {
      expect(isContextOverflowError(value)).toBe(false);
      expect(contextOverflowLimit(value)).toBeUndefined();
      expect(contextOverflowKind(value)).toBeUndefined();
      expect(promptTokensFromOverflow(value)).toBeUndefined();
    });

    it('should read a plain string', () => {
      expect(isContextOverflowError("This model's maximum context length is 128000 tokens.")).toBe(true);
      expect(contextOverflowLimit("This model's maximum context length is 128000 tokens.")).toBe(128000);
    });

    it('should never read requestBodyValues, which hold the prompt', () => {
      const error = new APICallError({
        message: 'Bad Request',
        url: 'https://api.example.com/v1',
        requestBodyValues: { messages: [{ role: 'user', content: 'why does it say prompt is too long?' }] },
        statusCode: 400,
        responseBody: '{"error":{"message":"Invalid schema for function"}}',
      });
      expect(isContextOverflowError(error)).toBe(false);
    });
  });

  describe('message patterns', () => {
    // One message of each provider's overflow, as it words it (the fixtures of fixtures/overflow/ hold
    // the whole errors).
    it.each([
      ['Anthropic', 'prompt is too long: 208656 tokens > 200000 maximum'],
      ['Anthropic', 'input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000'],
      ['Bedrock', 'Input is too long for requested model.'],
      ['Bedrock Nova', 'Number of input tokens exceeds maximum length.'],
      ['OpenAI', 'Your input exceeds the context window of this model.'],
      ['OpenAI', "This model's maximum context length is 128000 tokens."],
      ['LiteLLM', "Requested token count exceeds the model's maximum context length of 131,072 tokens."],
      ['LiteLLM', "Input length (265330) exceeds model's maximum context length (262144)."],
      ['Azure', 'Input tokens exceed the configured limit of 272000 tokens.'],
      ['Google', 'The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).'],
      ['Z.AI', 'tokens in request more than max tokens allowed'],
      ['Z.AI', 'model_context_window_exceeded'],
      ['Z.AI', 'Prompt 超长'],
      ['Z.AI', 'prompt too long'],
      ['xAI', "This model's maximum prompt length is 131072 but the request contains 136973 tokens."],
      ['Groq', 'Please reduce the length of the messages or completion.'],
      ['Poolside', 'Input length 131393 exceeds the maximum allowed input length of 131040 tokens.'],
      ['Together', "The input (516368 tokens) is longer than the model's context length (262144 tokens)."],
      ['Novita', "input is longer than the model's context length"],
      ['Copilot', 'prompt token count of 135087 exceeds the limit of 128000'],
      ['llama.cpp', 'the request exceeds the available context size, try increasing it'],
      ['LM Studio', 'The number of tokens to keep from the initial prompt is greater than the context length.'],
      ['MiniMax', 'invalid params, context window exceeds limit'],
      ['Kimi', 'Your request exceeded model token limit: 262144'],
      ['vLLM', "However, the model's context length is only 40960 tokens"],
      ['vLLM', 'Input length 9000 exceeds the context length 8192'],
      ['Ollama', 'prompt too long; exceeded max context length by 1183 tokens'],
      ['Ollama', 'prompt too long; exceeded context length by 12 tokens'],
      ['Mistral', 'Prompt contains 300000 tokens, too large for model with 131072 maximum context length'],
      ['DashScope', 'Range of input length should be [1, 129024]'],
      ['Cloudflare', 'The estimated number of input and maximum output tokens (35000) exceeded this model context window limit (24000).'],
      ['DeepInfra', 'Requested input length 35833 exceeds maximum input length 32767'],
      ['TGI', 'Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096.'],
      ['generic', 'context length exceeded'],
      ['generic', 'context_length_exceeded'],
      ['generic', 'too many tokens'],
      ['generic', 'Token limit exceeded for this request'],
      ['Cerebras', '400 status code (no body)'],
      ['Cerebras', '413 (no body)'],
    ])('should recognise %s: %s', (_provider, message) => {
      expect(isContextOverflowError(new Error(message))).toBe(true);
    });

    it('should call request-size errors request-size', () => {
      expect(contextOverflowKind(new Error('request entity too large'))).toBe('request-size');
      expect(contextOverflowKind(new Error('Payload Too Large'))).toBe('request-size');
      expect(contextOverflowKind({ error: { type: 'request_too_large', message: 'Request exceeds the maximum size' } })).toBe(
        'request-size',
      );
      expect(contextOverflowKind(new Error('413 status code (no body)'))).toBe('request-size');
      expect(contextOverflowKind(new Error('400 status code (no body)'))).toBe('context');
    });

    it('should call a 413 that names the context window a context overflow', () => {
      const fixture = fixtures.find(({ name }) => name === 'cloudflare-context-window-limit')!.fixture;
      expect(contextOverflowKind(apiCallError(fixture))).toBe('context');
    });

    it('should not recognise unrelated 400s', () => {
      for (const message of ['Invalid schema for function', 'messages: roles must alternate', 'Bad Request']) {
        expect(isContextOverflowError(Object.assign(new Error(message), { statusCode: 400 }))).toBe(false);
      }
    });

    it('should treat only a 400/413 with an empty body as bodiless', () => {
      const bodiless = (statusCode: number, responseBody: string) =>
        new APICallError({ message: 'x', url: 'https://api.example.com/v1', requestBodyValues: {}, statusCode, responseBody });
      expect(contextOverflowKind(bodiless(400, ''))).toBe('context');
      expect(contextOverflowKind(bodiless(413, '  '))).toBe('request-size');
      expect(isContextOverflowError(bodiless(404, ''))).toBe(false);
      expect(isContextOverflowError(bodiless(429, ''))).toBe(false);
      expect(isContextOverflowError(bodiless(400, '{"error":{"message":"Invalid schema"}}'))).toBe(false);
    });
  });

  describe('exclusions', () => {
    it.each([
      'Throttling error: Too many tokens, please wait before trying again.',
      'Service unavailable: too many tokens in flight',
      'Rate limit reached: context length exceeded',
      'Too Many Requests: too many tokens',
      'Request too large for model on tokens per minute (TPM): Limit 6000, Requested 7000',
      'too many tokens: max_tokens must be less than or equal to 4000',
    ])('should never recognise %s', message => {
      expect(isContextOverflowError(new Error(message))).toBe(false);
    });

    it.each([429, 500, 502, 503, 504, 529, 401, 404])('should never recognise HTTP %i', statusCode => {
      const error = Object.assign(new Error("This model's maximum context length is 128000 tokens."), { statusCode });
      expect(isContextOverflowError(error)).toBe(false);
    });

    it.each([200, 400, 413, 422])('should accept HTTP %i', statusCode => {
      const error = Object.assign(new Error("This model's maximum context length is 128000 tokens."), { statusCode });
      expect(isContextOverflowError(error)).toBe(true);
    });

    it('should never recognise a rate_limit_exceeded code', () => {
      expect(isContextOverflowError({ error: { code: 'rate_limit_exceeded', message: 'too many tokens' } })).toBe(false);
    });

    it('should never recognise a body that repeats a 429 or 5xx status', () => {
      expect(isContextOverflowError({ error: { code: 429, message: 'too many tokens' } })).toBe(false);
      expect(isContextOverflowError({ error: { code: 503, message: 'context length exceeded' } })).toBe(false);
    });
  });

  describe('contextOverflowLimit', () => {
    it.each([
      ["This model's maximum context length is 128000 tokens.", 128000],
      ['prompt is too long: 208656 tokens > 200000 maximum', 200000],
      ['The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).', 1048576],
      ["This model's maximum prompt length is 131072 but the request contains 136973 tokens.", 131072],
      ['Prompt contains 300000 tokens, too large for model with 131072 maximum context length', 131072],
      ['Your input exceeds the context window of 400000 tokens.', 400000],
      ['Input tokens exceed the configured limit of 272000 tokens.', 272000],
      ["However, the model's context length is only 40960 tokens", 40960],
      ["Requested token count exceeds the model's maximum context length of 32,768 tokens.", 32768],
      ['prompt token count of 135087 exceeds the limit of 128000', 128000],
      ['`inputs` tokens + `max_new_tokens` must be <= 4096.', 4096],
      ['context_length_exceeded: 144512 tokens > 128000 max', 128000],
      ['Context length exceeded: the limit is 16384 tokens', 16384],
      ['request (9450 tokens) exceeds the available context size (8192 tokens), try increasing it', 8192],
      ["The input (516368 tokens) is longer than the model's context length (262144 tokens).", 262144],
      ['Input length 131393 exceeds the maximum allowed input length of 131040 tokens.', 131040],
      ['Requested input length 35833 exceeds maximum input length 32767', 32767],
      ['Your request exceeded model token limit: 262144 (requested: 291351)', 262144],
      ['Range of input length should be [1, 129024]', 129024],
      ['exceeded this model context window limit (24000)', 24000],
    ] as const)('should read the limit in %s', (message, limit) => {
      expect(contextOverflowLimit(new Error(message))).toBe(limit);
    });

    it('should return nothing when the message states no limit', () => {
      expect(contextOverflowLimit(new Error('Input is too long for requested model.'))).toBeUndefined();
      expect(contextOverflowLimit(new Error('context length exceeded'))).toBeUndefined();
    });

    it('should return nothing for a rate limit that states numbers', () => {
      const error = new Error(
        'Request too large for model `llama-3.3-70b-versatile` on tokens per minute (TPM): Limit 12000, Requested 15211',
      );
      expect(contextOverflowLimit(error)).toBeUndefined();
      expect(promptTokensFromOverflow(error)).toBeUndefined();
    });
  });

  describe('promptTokensFromOverflow', () => {
    it.each([
      ["This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens.", 130412],
      ['prompt is too long: 208656 tokens > 200000 maximum', 208656],
      ['The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).', 1200293],
      ["This model's maximum prompt length is 131072 but the request contains 136973 tokens.", 136973],
      ['Prompt contains 300000 tokens, too large for model with 131072 maximum context length', 300000],
      [
        "This model's maximum context length is 131072 tokens. However, you requested 131134 tokens (122942 in the messages, 8192 in the completion).",
        122942,
      ],
      [
        "This endpoint's maximum context length is 200000 tokens. However, you requested about 250000 tokens (230000 of text input, 5000 of tool input, 15000 in the output).",
        235000,
      ],
      ["The input (516368 tokens) is longer than the model's context length (262144 tokens).", 516368],
      ['Input length 131393 exceeds the maximum allowed input length of 131040 tokens.', 131393],
      ['request (9450 tokens) exceeds the available context size (8192 tokens), try increasing it', 9450],
    ] as const)('should read the prompt size in %s', (message, tokens) => {
      expect(promptTokensFromOverflow(new Error(message))).toBe(tokens);
    });

    it('should return nothing when the message states no prompt size', () => {
      expect(promptTokensFromOverflow(new Error("This model's maximum context length is 128000 tokens."))).toBeUndefined();
      expect(promptTokensFromOverflow(new Error('Your request exceeded model token limit: 262144 (requested: 291351)'))).toBeUndefined();
    });
  });
});
