/* How much of each thing one account may keep: the use cases hold to these and the errors say them. */

/** Intake pages one account may have. */
export const MAX_INTAKE_PAGES = 100;

/** Webhook endpoints one account may have. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

/** Workflows one account may keep. */
export const MAX_WORKFLOWS = 100;

/** Message templates one account may keep. */
export const MAX_MESSAGE_TEMPLATES = 500;
