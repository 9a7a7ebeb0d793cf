/** An operator's request that cannot be carried out; the message is meant for the operator. */
export class AdminError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AdminError';
  }
}
