export * from './context.ts';
export * from './errors.ts';
export { declaredRouter, mayBeOmitted, type Operation, type OperationError, type OperationSpec } from './operation.ts';
export { type AppRouter, appRouter, operations } from './router.ts';
export { ApiError, type Meta } from './trpc.ts';
