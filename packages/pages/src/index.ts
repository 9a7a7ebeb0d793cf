export { createSite, type FormResult, type Site, type SiteDeps, type SiteLimits, siteLabel } from './routes.ts';
