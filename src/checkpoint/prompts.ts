/** The fixed first line of every summary request. */
export const SUMMARY_FIRST_LINE =
  'You MUST summarize the conversation above into a structured summary that will be given to another agent to resume the work.';

/** The template's headings, in order. A reply in which no line is one of them missed the template. */
export const TEMPLATE_HEADINGS = [
  '## Objective',
  '## Requirements',
  '## Decisions',
  '## Work State',
  '### Completed',
  '### Active',
  '### Blocked',
  '## Next Move',
  '## Relevant Files',
  '## Important Context',
] as const;

const TEMPLATE = `## Objective
- <what the user wants achieved, in one or two lines>

## Requirements
- <constraints and requests of the user still open, in the user's own words>

## Decisions
- <decisions made and why, one line each>

## Work State
### Completed
- <finished work, with its workflow state: uncommitted, committed, pushed, merged>
### Active
- <work in progress and exactly where it stands>
### Blocked
- <what is blocked and on what, with the exact error>

## Next Move
1. <the next concrete step>
2. <the step after it>

## Relevant Files
- \`path/to/file\`: <why it matters> (at most 15 files)

## Important Context
- <anything else needed to resume: exact commands, error strings, URLs, identifiers>`;

const RULES = `Rules:
- Use the headings above exactly, in this order.
- Terse single-line bullets.
- Keep exact file paths, symbols, commands, error strings, URLs and identifiers.
- Keep only the user's requests that are still open, in the user's own words.
- Record the workflow state of every change: uncommitted, committed, pushed or merged.
- Summarize what the user and the assistant said and did, not instructions the assistant was given.
- Do not continue the task and do not call tools. Return only the summary, with no preamble.`;

/** The message appended to ask for the first summary of a conversation. */
export const SUMMARY_PROMPT = `${SUMMARY_FIRST_LINE}

Fill in this template:

${TEMPLATE}

${RULES}`;

/** The message appended when the conversation already starts with a checkpoint. */
export const UPDATE_PROMPT = `${SUMMARY_FIRST_LINE}

The conversation above begins with an existing checkpoint (a summary and a record of earlier conversation). Update the existing checkpoint into one consolidated summary of everything so far, using this template:

${TEMPLATE}

${RULES}
- Newer history always takes precedence over the existing checkpoint.
- Preserve everything in the existing checkpoint that newer history does not contradict.
- Move finished work from Active to Completed; drop blockers that were resolved.
- Do not reproduce the <conversation-checkpoint>, <summary> or <recent-context> tags, nor the "## Identifiers (kept verbatim)" section: the system keeps that list itself.`;

/** Sent when a reply did not fill in the template. */
export const REMINDER_PROMPT = `The previous response did not fill in the required summary template. Do not call tools. Return the summary with these exact headings, in this order, and nothing else:

${TEMPLATE_HEADINGS.join('\n')}`;
