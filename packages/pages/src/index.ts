export { createSite, type Site, type SiteDeps, siteLabel } from './routes.ts';
