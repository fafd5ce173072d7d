/**
 * How an agent of a bundle is named in lists and asked for: `<module>/<id>` in installed and source
 * trees and projects of skills, else its id. Shared by the loader, inspect, validate and
 * delegation, and by the skills' part of the loader (skills/bundle-skills.ts).
 */
import type { BundleAgent, BundleInfo } from './bundle-loader';

/** How an agent is named in lists and asked for: `<module>/<id>` in installed and source trees, else its id. */
export function listedId(bundle: Pick<BundleInfo, 'kind'>, agent: Pick<BundleAgent, 'id' | 'module'>): string {
  return bundle.kind !== 'bundle' && agent.module ? `${agent.module}/${agent.id}` : agent.id;
}

/** The ids `findAgent` accepts, shown when an agent is not found (module-qualified in trees). */
export function availableIds(bundle: Pick<BundleInfo, 'kind' | 'agents'>): string[] {
  return bundle.agents.map((a) => listedId(bundle, a));
}
