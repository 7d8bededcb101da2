import type { RecalledMessage } from './messages';

/** What the model asks the recall tool: words, or a range of positions (both: words within the range), and a page. */
export interface RecallInput {
  query?: string;
  from?: number;
  to?: number;
  page?: number;
}

/** A message's exact text, or a part of it (`excerpt`: where in the message's text it stands). */
export interface RecallMatch {
  position: number;
  role: RecalledMessage['role'];
  text: string;
  excerpt?: { start: number; end: number; length: number };
}

/** One page of an answer: the matches, most relevant first (a range: in order), and where the next page is. */
export interface RecallAnswer {
  matches: RecallMatch[];
  page: number;
  pages: number;
  nextPage?: number;
  /** Messages handed to the tool: positions 0 to `messages - 1`. */
  messages: number;
}
