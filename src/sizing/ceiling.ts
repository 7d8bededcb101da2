import { DEFAULT_BUFFER } from '../tunables';

/** A buffer as given: a share of the window (`"20%"`) or a number of tokens. */
export type BufferSetting = { share: number } | { tokens: number };

/** Room kept free when no buffer is set: 15 % of the window, at least 16,000 from a 32,000 window up. */
export function defaultBuffer(window: number): number {
  const share = Math.round(window * DEFAULT_BUFFER.share);
  return window >= DEFAULT_BUFFER.minFromWindow ? Math.max(share, DEFAULT_BUFFER.minTokens) : share;
}

/** Tokens kept free for a window: the buffer, or the default when unset or the whole window or more. */
export function bufferTokens(window: number, buffer: BufferSetting | undefined): number {
  if (buffer === undefined || bufferFillsWindow(window, buffer)) return defaultBuffer(window);
  return 'share' in buffer ? Math.round((window * buffer.share) / 100) : buffer.tokens;
}

/** Whether a buffer keeps the whole window free or more (then the default stands, with a warning). */
export function bufferFillsWindow(window: number, buffer: BufferSetting | undefined): boolean {
  if (buffer === undefined) return false;
  return ('share' in buffer ? Math.round((window * buffer.share) / 100) : buffer.tokens) >= window;
}

/**
 * The largest prompt let out without compacting first:
 * `window - max(buffer, the step's maxOutputTokens)`.
 */
export function ceiling(window: number, buffer: BufferSetting | undefined, maxOutputTokens?: number): number {
  return window - Math.max(bufferTokens(window, buffer), maxOutputTokens ?? 0);
}
