export * from './context.ts';
export * from './errors.ts';
export type { Operation, OperationError, OperationSpec } from './operation.ts';
export { type AppRouter, appRouter, operations } from './router.ts';
export { ApiError, type Meta } from './trpc.ts';
