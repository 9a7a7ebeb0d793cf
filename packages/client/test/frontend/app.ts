// A frontend's own code: it imports the typed client and nothing else of this project.
import { createConversationsClient, describeError } from '@convo/client';

export async function latestTitle(baseUrl: string, token: string): Promise<string | null> {
  const api = createConversationsClient({ baseUrl, token });
  try {
    const created = await api.conversations.createConversation.mutate({ title: 'From a frontend' });
    const got = await api.conversations.getConversation.query({ slug: created.slug });
    return got.conversation_credated_time_nice;
  } catch (e) {
    return describeError(e)?.code ?? null;
  }
}
