export * from './admin/errors.ts';
export * from './admin/operations.ts';
export * from './admin/seed.ts';
export * from './orm.ts';
export * from './repositories/account-store.ts';
export * from './repositories/conversation-store.ts';
export * from './repositories/intake-page-store.ts';
export * from './tokens.ts';
