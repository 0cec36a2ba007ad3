// What to do when a conversation no longer fits the context: stop (say so, the user decides), cut
// the middle (keep the system prompt and the first exchange, drop the oldest turns after it), or a
// rolling window (drop the oldest turns). Whole turns go, a user message with the replies after
// it, so the template still sees user and assistant alternate and the last user message stays.

import type { ContextPolicy } from '../../shared/contract.js';
import type { ChatMessage } from './types.js';

export { CONTEXT_POLICIES, type ContextPolicy } from '../../shared/contract.js';

export interface FittedMessages {
  messages: ChatMessage[];
  /** Messages left out (0 when everything fits or the policy is 'stop'). */
  dropped: number;
}

/** Start index of each turn: a user message and the non-user messages after it. */
function turnStarts(messages: readonly ChatMessage[], from: number): number[] {
  const starts: number[] = [];
  for (let i = from; i < messages.length; i++) if (messages[i].role === 'user' || i === from) starts.push(i);
  return starts;
}

/**
 * The messages to send so that `count(messages)` (tokens of the rendered prompt) is at most
 * `budget`. Leading system messages always stay, and so does the last turn; if even that is too
 * long, what is left is returned and the caller's context check speaks.
 */
export function fitMessages(messages: readonly ChatMessage[], count: (m: ChatMessage[]) => number, budget: number, policy: ContextPolicy): FittedMessages {
  const all = [...messages];
  if (policy === 'stop' || count(all) <= budget) return { messages: all, dropped: 0 };
  let head = 0;
  while (head < all.length && all[head].role === 'system') head++;
  const starts = turnStarts(all, head);
  // truncate-middle keeps the first turn (the exchange that set the conversation up) too.
  const firstDroppable = policy === 'truncate-middle' ? 1 : 0;
  const keepHead = policy === 'truncate-middle' && starts.length > 1 ? starts[1] : head;
  for (let cut = firstDroppable + 1; cut < starts.length; cut++) {
    const tail = starts[cut];
    const kept = [...all.slice(0, keepHead), ...all.slice(tail)];
    if (count(kept) <= budget || cut === starts.length - 1) return { messages: kept, dropped: all.length - kept.length };
  }
  return { messages: all, dropped: 0 };
}
