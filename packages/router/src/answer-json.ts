import type { WireJson } from '@convo/domain';

/*
 * Answers' JSON text, made once per answer object. A producer that hands the same object out
 * again and again (the pages of conversations kept by change mark) makes its text as it keeps it;
 * the transports write every answer through `answerJson`, which finds that text or makes it.
 */
const texts = new WeakMap<object, string>();

/** Makes the answer's JSON text (unless it has one) and remembers it for as long as the answer lives. */
export function keepJson(answer: object): string {
  const text = texts.get(answer) ?? JSON.stringify(answer);
  texts.set(answer, text);
  return text;
}

/**
 * An answer whose JSON its store wrote (WireJson), parsed once into the object the procedure
 * answers with (tRPC and the answer checks read it); the transports write the store's text.
 */
export function viewOf<T extends object>(wire: WireJson<T>): T {
  const view: T = JSON.parse(wire.text);
  texts.set(view, wire.text);
  return view;
}

/**
 * A page (of conversations, of messages) whose JSON its store wrote (WireJson): written as that
 * text, and parsed only when something reads its one member, the list (tRPC's serializer, the
 * answer checks).
 */
export function listViewOf<K extends string, E>(page: WireJson<Record<K, E[]>>, member: K): Record<K, E[]> {
  let parsed: Record<K, E[]> | undefined;
  const view = {} as Record<K, E[]>;
  Object.defineProperty(view, member, {
    enumerable: true,
    get: () => {
      parsed ??= JSON.parse(page.text) as Record<K, E[]>;
      return parsed[member] ?? [];
    },
  });
  texts.set(view, page.text);
  return view;
}

/** The answer's JSON text: as kept, or made now. */
export function answerJson(answer: unknown): string {
  const kept = typeof answer === 'object' && answer !== null ? texts.get(answer) : undefined;
  return kept ?? JSON.stringify(answer);
}
