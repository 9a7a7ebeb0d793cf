import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { startOptions } from '../../scripts/start-options.ts';

/*
 * No container engine or cluster runs here, so the infrastructure is checked as far as tools
 * allow: every Kubernetes object against the Kubernetes schemas (kubernetes-models), the kustomize
 * overlay rendered by kubectl when it is installed, and the essentials an operator relies on.
 */

const INFRA = new URL('../', import.meta.url).pathname;
const read = (path: string) => readFileSync(`${INFRA}${path}`, 'utf8');

const MODELS: Record<string, new (doc: any) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};

type Doc = Record<string, any>;

const baseDocs = (): Doc[] =>
  readdirSync(`${INFRA}k8s/base`)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .flatMap((f) => parseAllDocuments(read(`k8s/base/${f}`)).map((d) => d.toJS() as Doc));

const hasKubectl = (() => {
  try {
    execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

function validate(docs: Doc[]) {
  for (const doc of docs) {
    const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
    expect(Model, `no schema for ${doc.apiVersion} ${doc.kind}`).toBeDefined();
    expect(
      () => new (Model as NonNullable<typeof Model>)(doc).validate(),
      `${doc.kind} ${doc.metadata?.name}`,
    ).not.toThrow();
  }
}

if (!hasKubectl) {
  console.warn(
    'manifests.test.ts: kubectl is absent, so rendering the production overlay is skipped (the base objects are still checked)',
  );
}

/** The API's own object of a kind (the object storage beside it has objects of the same kinds). */
const find = (docs: Doc[], kind: string) =>
  docs.find((d) => d.kind === kind && String(d.metadata.name).startsWith('conversations-api')) as Doc;

describe('Kubernetes manifests', () => {
  it('are valid against the Kubernetes schemas', () => {
    const docs = baseDocs();
    expect(docs.map((d) => d.kind).sort()).toEqual([
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'Ingress',
      'Job',
      'Job',
      'PodDisruptionBudget',
      'Secret',
      'Secret',
      'Service',
      'Service',
      'StatefulSet',
    ]);
    validate(docs);
  });

  it.skipIf(!hasKubectl)('render through the production overlay (kubectl kustomize) into valid objects', () => {
    const rendered = parseAllDocuments(
      execFileSync('kubectl', ['kustomize', `${INFRA}k8s/overlays/production`], { encoding: 'utf8' }),
    ).map((d) => d.toJS() as Doc);
    validate(rendered);
    expect(rendered.every((d) => d.metadata.namespace === 'conversations')).toBe(true);
    expect(find(rendered, 'HorizontalPodAutoscaler').spec.minReplicas).toBe(3);
    expect(find(rendered, 'Deployment').spec.template.spec.containers[0].image).toBe(
      'registry.example.com/conversations-api:0.1.0',
    );
  });

  it('wire probes, resources, configuration, the secret and a preStop pause into the Deployment', () => {
    const docs = baseDocs();
    const deployment = find(docs, 'Deployment');
    const pod = deployment.spec.template.spec;
    const [api] = pod.containers;
    expect(api.readinessProbe.httpGet.path).toBe('/readyz');
    expect(api.livenessProbe.httpGet.path).toBe('/healthz');
    expect(api.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(api.resources.limits.memory).toBeDefined();
    expect(api.lifecycle.preStop.exec.command).toEqual(['sleep', '5']);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(5 + 10);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
    expect(api.envFrom).toEqual([
      { configMapRef: { name: find(docs, 'ConfigMap').metadata.name } },
      { secretRef: { name: 'conversations-media' } },
    ]);
    expect(api.env).toContainEqual({
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: find(docs, 'Secret').metadata.name, key: 'DATABASE_URL' } },
    });
    expect(find(docs, 'ConfigMap').data.MIGRATE_ON_START).toBe('false');
    // /metrics asks for a bearer token: the pods get it from the Secret, never from the ConfigMap.
    expect(api.env).toContainEqual({
      name: 'METRICS_TOKEN',
      valueFrom: { secretKeyRef: { name: find(docs, 'Secret').metadata.name, key: 'METRICS_TOKEN' } },
    });
    expect(find(docs, 'ConfigMap').data.METRICS_TOKEN).toBeUndefined();
    expect(deployment.spec.template.metadata.annotations['prometheus.io/path']).toBe('/metrics');
  });

  it('point the Service, autoscaler and disruption budget at the Deployment, and migrate in a Job', () => {
    const docs = baseDocs();
    const deployment = find(docs, 'Deployment');
    const podLabels = deployment.spec.template.metadata.labels;
    expect(deployment.spec.selector.matchLabels).toEqual(podLabels);
    expect(find(docs, 'Service').spec.selector).toEqual(podLabels);
    expect(find(docs, 'PodDisruptionBudget').spec.selector.matchLabels).toEqual(podLabels);
    const hpa = find(docs, 'HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deployment.metadata.name,
    });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    const job = find(docs, 'Job');
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'apps/api/src/cli/main.ts', 'migrate']);
    expect(job.spec.template.spec.restartPolicy).toBe('Never');
    // Every host the Ingress answers reaches the Service, and the server believes what it forwards.
    const ingress = find(docs, 'Ingress');
    for (const rule of ingress.spec.rules) {
      expect(rule.http.paths[0].backend.service.name).toBe(find(docs, 'Service').metadata.name);
    }
    expect(find(docs, 'ConfigMap').data.TRUST_PROXY).toBe('1');
  });
});

describe('the optional speech engine', () => {
  it('is valid for Kubernetes, outside the base, and in compose only under its profile', () => {
    const docs = parseAllDocuments(read('k8s/optional/speech.yaml')).map((d) => d.toJS() as Doc);
    expect(docs.map((d) => d.kind).sort()).toEqual(['Deployment', 'PersistentVolumeClaim', 'Service']);
    validate(docs);
    expect(read('k8s/base/kustomization.yaml')).not.toContain('speech');
    const services = (parse(read('compose/compose.yaml')) as Doc).services as Record<string, Doc>;
    expect(services.speech?.profiles).toEqual(['speech']);
    expect(services.speech?.ports).toBeUndefined();
    expect(services.api?.depends_on).not.toHaveProperty('speech');
  });
});

describe('the compose stack', () => {
  const compose = parse(read('compose/compose.yaml')) as Doc;
  const services = compose.services as Record<string, Doc>;

  it('has PostgreSQL (pinned major, health check, volume), a migration job, API replicas and nginx in front', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'media-bucket',
      'migrate',
      'minio',
      'postgres',
      'proxy',
      'speech',
    ]);
    expect(services.postgres?.image).toMatch(/^postgres:\d+$/);
    expect(services.postgres?.healthcheck.test.join(' ')).toContain('pg_isready');
    expect(services.postgres?.volumes[0]).toMatch(/^pgdata:/);
    expect(compose.volumes).toHaveProperty('pgdata');
    expect(services.migrate?.command).toEqual(['node', 'apps/api/src/cli/main.ts', 'migrate']);
    expect(services.migrate?.depends_on.postgres.condition).toBe('service_healthy');
    expect(services.api?.depends_on.migrate.condition).toBe('service_completed_successfully');
    expect(services.api?.environment.MIGRATE_ON_START).toBe('false');
    expect(services.api?.deploy.replicas).toBeGreaterThan(1);
    expect(services.proxy?.image).toMatch(/^nginx:/);
    expect(services.proxy?.depends_on.api.condition).toBe('service_healthy');
    expect(read('compose/nginx.conf')).toMatch(/server api:3000 resolve;/);
    expect(services.api?.environment.METRICS_TOKEN).toMatch(/\S{16,}/);
    expect(read('compose/nginx.conf')).toMatch(/location = \/metrics \{\s*return 404;/);
  });

  it('keeps recordings in a MinIO bucket every replica shares, made before the replicas start', () => {
    expect(services.minio?.image).toMatch(/^minio\/minio:RELEASE\./);
    expect(services['media-bucket']?.command.join(' ')).toContain(
      `mc mb --ignore-existing media/${services.api?.environment.MEDIA_S3_BUCKET}`,
    );
    expect(services.api?.environment.MEDIA_S3_ENDPOINT).toBe('http://minio:9000');
    expect(services.api?.depends_on['media-bucket'].condition).toBe('service_completed_successfully');
    // Recordings and uploads come and go through nginx as they arrive, never buffered whole.
    expect(read('compose/nginx.conf')).toMatch(/location ~ \^\(\/c\/\[\^\/\]\+\|\/uploads/);
    // A replica hands a recording's bytes to nginx's internal location, which fetches them from
    // MinIO (chaos/media.chaos.ts runs that location against a real S3 server).
    expect(services.api?.environment.MEDIA_ACCEL_REDIRECT).toBe('/internal/media/');
    expect(read('compose/nginx.conf')).toMatch(
      /location \/internal\/media\/ \{\s*internal;[^}]*proxy_pass http:\/\/minio:9000\/;/,
    );
  });

  it('counts each visitor by the address nginx appends, not as nginx itself', () => {
    // nginx appends the client's address (the right-most entry); the server takes that one.
    expect(read('compose/nginx.conf')).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
    expect(services.api?.environment.TRUST_PROXY).toBe('1');
  });
});

describe('the container image', () => {
  const dockerfile = read('docker/Dockerfile');

  it('is multi-stage, production dependencies only, non-root, health-checked on /readyz, not migrating at start', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/npm install --omit=dev/);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/HEALTHCHECK[\s\S]*\/readyz/);
    expect(dockerfile).toMatch(/MIGRATE_ON_START=false/);
    // The server starts as `npm start` starts it, with the same Node options.
    const start = JSON.parse(read('../package.json')).scripts.start.split(' ');
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]');
    expect(cmd).toEqual(start);
    // The CLI and the demo run with the same options: the compile cache is filled under start's.
    for (const script of ['cli', 'demo'] as const) expect(startOptions(script)).toEqual(startOptions('start'));
    expect(cmd.at(-1)).toBe('apps/api/src/entry/node.ts');
    // Every workspace package the server imports is installed and copied, sources and all.
    const api = JSON.parse(read('../apps/api/package.json'));
    const ours = Object.keys(api.dependencies).filter((name) => name.startsWith('@convo/'));
    for (const name of ours) {
      const dir = `packages/${name.slice('@convo/'.length)}`;
      // Its package.json in both stages (npm links the workspace), its sources in the image.
      expect(dockerfile.split(`COPY ${dir}/package.json ${dir}/\n`).length - 1).toBe(2);
      expect(dockerfile).toContain(`COPY ${dir}/src ${dir}/src\n`);
    }
    // Everything the image copies exists.
    for (const [, from] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm)) {
      expect(() => readFileSync(new URL(`../../${from}`, import.meta.url))).not.toThrow(/ENOENT/);
    }
  });
});
