/**
 * The Railway public GraphQL API documents the provider sends (lib/runtime/railway.ts): each cites the Railway
 * docs page its shape comes from. The fake in tests/support/railway-server.ts checks requests against its own copy of
 * those shapes, so a change here that Railway would refuse fails a test.
 */

/** docs "GraphQL overview": a project's services as a connection (`project(id) { services { edges { node } } }`). */
export const PROJECT_SERVICES = `query projectServices($id: String!) {
  project(id: $id) {
    services {
      edges {
        node {
          id
          name
        }
      }
    }
  }
}`

/** docs "Manage Services" → "Create a service" → "From a Docker image": input {projectId, name, source: {image}}. */
export const SERVICE_CREATE = `mutation serviceCreate($input: ServiceCreateInput!) {
  serviceCreate(input: $input) {
    id
    name
  }
}`

/**
 * docs "Manage Variables" → "Upsert multiple variables": input {projectId, environmentId, serviceId, variables},
 * optional `replace` and `skipDeploys` ("Don't trigger a redeploy after change"). We skip the redeploy: create
 * deploys once, at the end.
 */
export const VARIABLE_COLLECTION_UPSERT = `mutation variableCollectionUpsert($input: VariableCollectionUpsertInput!) {
  variableCollectionUpsert(input: $input)
}`

/** docs "Manage Volumes" → "Create a volume": input {projectId, serviceId, mountPath}, optional environmentId. */
export const VOLUME_CREATE = `mutation volumeCreate($input: VolumeCreateInput!) {
  volumeCreate(input: $input) {
    id
    name
  }
}`

/** docs "Manage Volumes" → "Delete a volume" (used only to clean up a half-made runtime). */
export const VOLUME_DELETE = `mutation volumeDelete($volumeId: String!) {
  volumeDelete(volumeId: $volumeId)
}`

/**
 * Per-service resources. The docs ("Manage Services" → "Get resource limits") show only the read side,
 * `serviceInstanceLimits(serviceId, environmentId)` returning JSON. The write side is
 * `serviceInstanceLimitsUpdate(input: ServiceInstanceLimitsUpdateInput!): Boolean` with input
 * {serviceId: String!, environmentId: String!, memoryGB: Float, vCPUs: Float}, as Railway's schema declares it
 * and as generated Railway clients send it; it applies from the next deployment, which create triggers last.
 * `serviceInstanceUpdate`'s documented input has no resource fields, so it is not the way.
 */
export const SERVICE_INSTANCE_LIMITS_UPDATE = `mutation serviceInstanceLimitsUpdate($input: ServiceInstanceLimitsUpdateInput!) {
  serviceInstanceLimitsUpdate(input: $input)
}`

/** docs "Manage Domains" → "Create a service domain": input {serviceId, environmentId}, optional targetPort. */
export const SERVICE_DOMAIN_CREATE = `mutation serviceDomainCreate($input: ServiceDomainCreateInput!) {
  serviceDomainCreate(input: $input) {
    id
    domain
  }
}`

/**
 * docs "Manage Services" → "Deploy a service": a new deployment of the service's current source and
 * configuration; returns the deployment id. Used at the end of create and after an image change.
 */
export const SERVICE_INSTANCE_DEPLOY = `mutation serviceInstanceDeployV2($serviceId: String!, $environmentId: String!) {
  serviceInstanceDeployV2(serviceId: $serviceId, environmentId: $environmentId)
}`

/** docs "Manage Services" → "Redeploy a service": redeploys the latest deployment (start, repair). */
export const SERVICE_INSTANCE_REDEPLOY = `mutation serviceInstanceRedeploy($serviceId: String!, $environmentId: String!) {
  serviceInstanceRedeploy(serviceId: $serviceId, environmentId: $environmentId)
}`

/**
 * docs "Manage Services" → "Update service instance settings": serviceInstanceUpdate(serviceId, environmentId,
 * input: ServiceInstanceUpdateInput!). The source is `input.source` (ServiceSourceInput {image, repo}), the field
 * Railway's CLI sets the same way for a repo (`input: {source: {repo: $repo}}`).
 */
export const SERVICE_INSTANCE_UPDATE = `mutation serviceInstanceUpdate($serviceId: String!, $environmentId: String!, $input: ServiceInstanceUpdateInput!) {
  serviceInstanceUpdate(serviceId: $serviceId, environmentId: $environmentId, input: $input)
}`

/**
 * docs "Manage Deployments" → "List deployments" / "Get latest active deployment": deployments(input:
 * DeploymentListInput!, first: Int), newest first; `first: 1` is the latest. No status filter: a crashed
 * deployment is exactly the one to restart or read logs of.
 */
export const LATEST_DEPLOYMENT = `query deployments($input: DeploymentListInput!, $first: Int) {
  deployments(input: $input, first: $first) {
    edges {
      node {
        id
        status
        createdAt
      }
    }
  }
}`

/** docs "Manage Deployments" → "Restart a deployment": restarts a running deployment without rebuilding. */
export const DEPLOYMENT_RESTART = `mutation deploymentRestart($id: String!) {
  deploymentRestart(id: $id)
}`

/**
 * docs "Manage Deployments" → "Stop a deployment": stops a running deployment; the service, its variables,
 * volume and domain stay, and `serviceInstanceRedeploy` (start) brings it back.
 */
export const DEPLOYMENT_STOP = `mutation deploymentStop($id: String!) {
  deploymentStop(id: $id)
}`

/** docs "Manage Services" → "Delete a service": "deletes the service and all its deployments". */
export const SERVICE_DELETE = `mutation serviceDelete($id: String!) {
  serviceDelete(id: $id)
}`

/**
 * docs "Manage Deployments" → "Get runtime logs": deploymentLogs(deploymentId, limit) → [{timestamp, message,
 * severity}], optional `filter`, `startDate`, `endDate` (ISO 8601).
 */
export const DEPLOYMENT_LOGS = `query deploymentLogs($deploymentId: String!, $limit: Int, $startDate: DateTime) {
  deploymentLogs(deploymentId: $deploymentId, limit: $limit, startDate: $startDate) {
    timestamp
    message
    severity
  }
}`
