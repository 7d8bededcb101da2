// Error bodies exactly as the providers send them (as the fixtures of fixtures/overflow/ keep them).

export function openaiChatOverflow(window: number, tokens: number) {
  return {
    error: {
      message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  };
}

export const OPENAI_RESPONSES_OVERFLOW_MESSAGE =
  'Your input exceeds the context window of this model. Please adjust your input and try again.';

/** Non-streaming Responses request: HTTP 400 with this body. */
export function openaiResponsesOverflow() {
  return {
    error: {
      message: OPENAI_RESPONSES_OVERFLOW_MESSAGE,
      type: 'invalid_request_error',
      param: 'input',
      code: 'context_length_exceeded',
    },
  };
}

/** Streaming Responses request: HTTP 200, this SSE frame after `response.created` / `response.in_progress`. */
export function openaiResponsesOverflowFrame(sequenceNumber = 2) {
  return {
    type: 'error',
    sequence_number: sequenceNumber,
    error: {
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
      message: OPENAI_RESPONSES_OVERFLOW_MESSAGE,
      param: 'input',
    },
  };
}

export function anthropicOverflow(window: number, tokens: number) {
  return {
    type: 'error',
    error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` },
  };
}

export function openaiInvalidRequest(message: string, param: string | null = null, code: string | null = null) {
  return { error: { message, type: 'invalid_request_error', param, code } };
}

export function anthropicInvalidRequest(message: string, type = 'invalid_request_error') {
  return { type: 'error', error: { type, message } };
}
