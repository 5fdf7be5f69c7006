/** The delivery targets available to the worker, by kind. */
import type { Config } from '../core/config/types';
import { logTarget } from '../core/delivery/log-target';
import type { DeliveryTarget } from '../core/delivery/target';
import type { TargetKind } from '../core/types';

export function createTargets(_settings: Config['delivery']): Partial<Record<TargetKind, DeliveryTarget>> {
  return { log: logTarget };
}
