export * from './context.ts';
export * from './errors.ts';
export { declaredRouter, mayBeOmitted, type Operation, type OperationError, type OperationSpec } from './operation.ts';
export { type ListedPage, type PageAt, PageCache, type PageSource } from './page-cache.ts';
/** The answers' wire shapes, for clients of another server that speaks this API (import-api). */
export { ZConversation } from './procedures/conversations/conversation.types.ts';
export { ZConversationList } from './procedures/conversations/list-conversations.types.ts';
export { type AppRouter, appRouter, operations } from './router.ts';
export { ApiError, type Meta } from './trpc.ts';
