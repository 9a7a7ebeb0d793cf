export * from './context.ts';
export * from './errors.ts';
export { type AppRouter, appRouter } from './router.ts';
export { ApiError, type Meta } from './trpc.ts';
