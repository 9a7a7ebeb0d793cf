export { Answer, answer, type Notes, noteHeaders } from './answer.ts';
export { answerJson } from './answer-json.ts';
export * from './context.ts';
export { ConversationListCache, type ListedPage, type PageAt, type PageSource } from './conversation-list-cache.ts';
export * from './errors.ts';
export {
  inputObject,
  kebabName,
  type Operation,
  type OperationError,
  type OperationSpec,
  openApiRouter,
  snakeName,
} from './operation.ts';
export { type AppRouter, appRouter, FORMER_TRPC_PATHS, operations } from './router.ts';
export { ApiError, createCallerFactory, type Meta } from './trpc.ts';
