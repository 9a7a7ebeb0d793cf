/*
 * The site's own secret: what its signed links and tokens are signed with (mail's one-click
 * links, visitors' passes and handoffs, intake form tokens), kept in the database so every
 * replica signs alike.
 */
export interface SiteSecrets {
  /** The signing key, the same on every replica. */
  signingKey(): Promise<string>;
}
