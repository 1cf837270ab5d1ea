/** A product direction as shape writes it (packages/core/src/shape/direction.ts), for tests that seed shape's record. */
import type { ShapeDirection } from '@hydraflow/core';

export const DIRECTION_B: ShapeDirection = {
  letter: 'B',
  name: 'Guided First Run',
  scope: 'A three-step welcome checklist shown on first login; no email campaign, no video tours.',
  tradeoffs: 'Quick to ship and measurable; does not help users who skip the checklist.',
  size: 'M',
  defer: false,
};
