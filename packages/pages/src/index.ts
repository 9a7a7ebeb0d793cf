export {
  DEFAULT_SITE_LIMITS,
  type FormResult,
  type LiveStreamRequest,
  type LiveStreams,
  type OpenedStream,
  type SiteDeps,
  type SiteLimits,
  type SiteVisit,
} from './deps.ts';
export { KeptFiles } from './kept-files.ts';
export { signInLinks } from './posting.ts';
export { type Beacon, beaconAt, PLAYED_ROUTE } from './routes/plays.ts';
export { createSite, loggedPath, type Site } from './site.ts';
export { demoMailPage, mailHtml, notificationHtml, type UnsentMail } from './views/mail.ts';
