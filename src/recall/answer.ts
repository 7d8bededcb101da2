import type { RecallAnswer, RecallMatch } from './types';

/**
 * The recall tool's answer as the model reads it (docs/design.md, "Recall"): a first line (the page,
 * the next one, the positions handed), then each match under a header naming its position, its role
 * and, for a part of a message, which characters of it; the text itself exactly as it stands.
 */
export function answerText(answer: RecallAnswer): string {
  return [headLine({ ...answer, count: answer.matches.length }), ...answer.matches.map((match) => `${matchHeader(match)}\n${match.text}`)].join('\n\n');
}

/** The answer's first line, for `count` matches. */
export function headLine({ count, page, pages, nextPage, messages }: Pick<RecallAnswer, 'page' | 'pages' | 'nextPage' | 'messages'> & { count: number }): string {
  const handed = messages === 0 ? 'no messages' : `positions 0 to ${messages - 1}`;
  if (count === 0) return `No match (${handed}${pages > 0 ? `; ${pages} pages` : ''}).`;
  const next = nextPage === undefined ? 'the last page' : `next: page ${nextPage}`;
  return `Page ${page} of ${pages} (${next}); ${count} matches, the best first, from the conversation's ${handed}:`;
}

/** A match's header: its position, its role, and which characters of the message it holds when not all. */
export function matchHeader({ position, role, excerpt }: Pick<RecallMatch, 'position' | 'role' | 'excerpt'>): string {
  const part = excerpt === undefined ? '' : `, characters ${excerpt.start} to ${excerpt.end} of ${excerpt.length}`;
  return `--- #${position} ${role}${part} ---`;
}
