import { defineConfig } from 'tsdown';

/*
 * The package as published: one ES module and one declaration file. The server's router type is
 * bundled into the declarations (its packages are not published); tRPC and zod stay imports,
 * resolved from the consumer's dependencies.
 */
export default defineConfig({
  entry: ['src/index.ts'],
  format: 'esm',
  platform: 'neutral',
  outDir: 'dist',
  clean: true,
  // Build mode follows the tsconfig's references, so the build needs no earlier `tsc -b`.
  dts: { tsconfig: 'tsconfig.json', tsc: { build: true } },
  deps: {
    // The router's types (and the OpenAPI meta types they carry) go into the declarations; tRPC and
    // zod are the package's dependencies.
    dts: { alwaysBundle: ['@convo/router', '@convo/domain', 'trpc-to-openapi', 'zod-openapi'] },
    onlyBundle: false,
  },
});
