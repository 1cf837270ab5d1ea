/**
 * Which track an issue is on (docs/adr/0012-product-track.md), for the progress comment: `product` once it took the
 * product track — its stage is discover or shape, triage routed it to discover, or its signed state holds a brief or a
 * shape record (it stays product after rejoining at plan: its plan is split into sub-issues, its review checks the
 * chosen direction) —, `engineering` once triage routed it directly or it reached an engineering stage, `junction`
 * before either is known. From the stages' track facts (labels.ts) and the signed state only. Pure.
 */
import { stageInfo, type PipelineStage } from './labels';

export type IssueTrack = 'product' | 'engineering' | 'junction';

export function issueTrack(
  state: { triage?: { route: string } | undefined; discover?: unknown; shape?: unknown },
  stage: PipelineStage | null,
): IssueTrack {
  const own = stage ? stageInfo(stage).track : undefined;
  if (own === 'product' || state.discover || state.shape || state.triage?.route === 'discover') return 'product';
  if (own === 'engineering' || state.triage) return 'engineering';
  return 'junction';
}

const TRACK_NOTES: Readonly<Record<IssueTrack, string>> = {
  product: 'product — discover and shape narrow the scope; it rejoins at plan, split into phase sub-issues',
  engineering: 'engineering — plan, implement, review, merge',
  junction: 'junction — not routed yet',
};

/** The progress comment's Track cell. */
export function trackCell(track: IssueTrack): string {
  return TRACK_NOTES[track];
}
