import { isEmailAddress, normaliseHost, titleTemplateProblem } from '@convo/domain';
import { AdminError } from './errors.ts';

export const ACCOUNT_KEY_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export function accountKey(key: string): string {
  if (!ACCOUNT_KEY_PATTERN.test(key)) {
    throw new AdminError(`account key ${JSON.stringify(key)}: use 1-32 lowercase letters, digits, '_' or '-'`);
  }
  return key;
}

export function host(value: string): string {
  const origin = normaliseHost(value);
  if (!origin) throw new AdminError(`host ${JSON.stringify(value)}: give an origin like https://acme.example.com`);
  return origin;
}

export function email(value: string): string {
  if (!isEmailAddress(value)) {
    throw new AdminError(`email ${JSON.stringify(value)} is not an e-mail address`);
  }
  return value;
}

export function name(what: string, value: string, max = 255): string {
  if (value.trim().length === 0 || value.length > max) {
    throw new AdminError(`${what} must be 1 to ${max} characters`);
  }
  return value;
}

export function titleTemplate(value: string): string {
  const problem = titleTemplateProblem(value);
  if (problem) throw new AdminError(problem);
  return value;
}
