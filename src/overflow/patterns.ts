/**
 * What providers say when a prompt is too long, and what they say that is no overflow: the
 * statuses, codes and message patterns `recognize.ts` reads an error with, and the phrases that
 * state a limit or a prompt's size. One entry a provider's wording; each is tried against the
 * errors kept in `fixtures/overflow/` (test/core/overflow/recognize.test.ts).
 */

export const OVERFLOW_STATUSES = new Set([200, 400, 413, 422]);

export const CONTEXT_CODES = new Set(['context_length_exceeded', 'model_context_window_exceeded']);
export const REQUEST_SIZE_CODES = new Set(['request_too_large']);
export const NON_OVERFLOW_CODES = new Set(['rate_limit_exceeded', 'rate_limit_error', 'throttlingexception']);

/** Where providers put their error code, relative to the body or raw error object. */
export const CODE_PATHS: readonly (readonly string[])[] = [
  ['code'],
  ['type'],
  ['error', 'code'],
  ['error', 'type'],
  ['error', 'status'],
  ['response', 'error', 'code'],
  ['exception', 'type'],
];

/** Checked first: throughput limits and server trouble are never overflow. */
export const NON_OVERFLOW_PATTERNS: readonly RegExp[] = [
  /^(?:throttling error|service unavailable):/i,
  /rate limit/i,
  /too many requests/i,
  /tokens per minute/i,
  /max[_ ]tokens must be less than/i, // Cohere
  // Bedrock's ThrottlingException reaches a stream as a bare `{ message }` ("Too many tokens,
  // please wait before trying again.") that the generic /too many tokens/ would otherwise match.
  /please wait before trying again/i,
];

/**
 * Anthropic answers a prompt past 200k tokens on a model whose long context is a paid tier with an
 * HTTP 429 of error type `request_too_large` ("Extra usage is required for long context
 * requests"): no rate limit, compacting under 200k is the cure. Recognised before the 429 rule.
 */
export const LONG_CONTEXT_TIER_PATTERN = /extra usage is required for long context requests/i;

/** Mistral and Cerebras may answer 400/413 with no body. */
export const NO_BODY_PATTERN = /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i;

export const CONTEXT_PATTERNS: readonly RegExp[] = [
  /prompt is too long/i, // Anthropic
  /request size exceeds model context window/i, // Anthropic
  /input length and `?max_tokens`? exceed context limit/i, // Anthropic
  /input is too long for requested model/i, // Bedrock
  /number of input tokens exceeds maximum length/i, // Bedrock Nova
  /exceeds the context window/i, // OpenAI Responses
  /maximum context length is \d+ tokens/i, // OpenAI, OpenRouter, DeepSeek, vLLM
  /exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))/i, // OpenAI-compatible, LiteLLM
  /input tokens exceed the configured limit of \d+ tokens/i, // Azure
  /input token count.*exceeds the maximum/i, // Google
  /tokens in request more than max tokens allowed/i, // Z.AI
  /model_context_window_exceeded/i, // Z.AI
  /prompt (?:too long|超长)/i, // Z.AI
  /prompt exceeds max length/i, // Z.AI (code 1261)
  /maximum prompt length is \d+/i, // xAI
  /reduce the length of the messages/i, // Groq
  /exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?/i, // OpenRouter, Poolside
  /input(?: \(\d+ tokens\))? is longer than the model'?s context length/i, // Together, Novita
  /exceeds the limit of \d+/i, // GitHub Copilot
  /exceeds the available context size/i, // llama.cpp
  /greater than the context length/i, // LM Studio
  /context window exceeds limit/i, // MiniMax
  /exceeded model token limit/i, // Kimi, Moonshot
  /context length is only \d+ tokens/i, // vLLM
  /input length.*exceeds.*context length/i, // vLLM
  /prompt too long; exceeded (?:max )?context length/i, // Ollama
  /too large for model with \d+ maximum context length/i, // Mistral
  /range of input length should be/i, // DashScope
  /exceeded this model context window limit/i, // Cloudflare
  /requested input length \d+ exceeds maximum input length/i, // DeepInfra
  /`inputs` tokens \+ `max_new_tokens` must be <= \d+/i, // Hugging Face TGI
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
];

export const REQUEST_SIZE_PATTERNS: readonly RegExp[] = [
  /request_too_large/i,
  /request entity too large/i,
  /payload too large/i,
];

const NUMBER = String.raw`(\d[\d,]*)`;

/** Phrases that state the model's limit; the first capture is the number. */
export const LIMIT_PATTERNS: readonly RegExp[] = [
  new RegExp(String.raw`maximum context length is ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`exceed context limit: [\d,]+ \+ [\d,]+ > ${NUMBER}`, 'i'),
  new RegExp(String.raw`> ${NUMBER} max(?:imum)?\b`, 'i'),
  new RegExp(String.raw`maximum number of tokens allowed \(${NUMBER}\)`, 'i'),
  new RegExp(String.raw`maximum prompt length is ${NUMBER}`, 'i'),
  new RegExp(String.raw`with ${NUMBER} maximum context length`, 'i'),
  new RegExp(String.raw`configured limit of ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`context length is only ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`maximum context length of ${NUMBER} tokens?`, 'i'),
  new RegExp(String.raw`maximum context length \(${NUMBER}\)`, 'i'),
  new RegExp(String.raw`context length \(${NUMBER} tokens\)`, 'i'),
  new RegExp(String.raw`maximum allowed input length of ${NUMBER} tokens?`, 'i'),
  new RegExp(String.raw`exceeds maximum input length ${NUMBER}`, 'i'),
  new RegExp(String.raw`exceeds the limit of ${NUMBER}`, 'i'),
  new RegExp(String.raw`must be <= ${NUMBER}`, 'i'),
  new RegExp(String.raw`context window limit \(${NUMBER}\)`, 'i'),
  new RegExp(String.raw`context window of ${NUMBER}`, 'i'),
  new RegExp(String.raw`available context size \(${NUMBER} tokens\)`, 'i'),
  new RegExp(String.raw`exceeded model token limit:? ${NUMBER}`, 'i'),
  new RegExp(String.raw`range of input length should be \[\d+, ?${NUMBER}\]`, 'i'),
  new RegExp(String.raw`context[_ ]length[_ ]exceeded\b[^.\d]{0,40}?\b(?:limit|max(?:imum)?)(?: is| of)?:? \(?${NUMBER}`, 'i'),
];

/** Phrases that state the rejected prompt's size; the first capture is the number. */
export const PROMPT_TOKENS_PATTERNS: readonly RegExp[] = [
  new RegExp(String.raw`messages resulted in ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`\(${NUMBER} in the messages`, 'i'),
  new RegExp(String.raw`prompt is too long: ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`exceed context limit: ${NUMBER} \+`, 'i'),
  new RegExp(String.raw`input token count \(${NUMBER}\)`, 'i'),
  new RegExp(String.raw`request contains ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`prompt contains ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`prompt has ${NUMBER} tokens`, 'i'),
  new RegExp(String.raw`you passed ${NUMBER} input tokens`, 'i'),
  new RegExp(String.raw`request has ${NUMBER} input tokens`, 'i'),
  new RegExp(String.raw`input \(${NUMBER} tokens\)`, 'i'),
  new RegExp(String.raw`prompt token count of ${NUMBER}`, 'i'),
  new RegExp(String.raw`requested input length ${NUMBER}`, 'i'),
  new RegExp(String.raw`input length \(?${NUMBER}\)? exceeds`, 'i'),
  new RegExp(String.raw`request \(${NUMBER} tokens\) exceeds`, 'i'),
  new RegExp(String.raw`given: ${NUMBER} \`inputs\` tokens`, 'i'),
];

/** OpenRouter: "you requested about 250000 tokens (230000 of text input, 20000 in the output)". */
export const OPENROUTER_REQUESTED = /you requested about [\d,]+ tokens \(([^)]*)\)/i;
export const OPENROUTER_INPUT_PART = /(\d[\d,]*) of \w+ input/gi;
