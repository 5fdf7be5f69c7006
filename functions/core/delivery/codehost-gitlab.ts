/** `codehost_comment` on GitLab: a note on the MR or issue (sticky or new), or a commit comment. */
import type { CodehostSettings } from '../config/types';
import { GITLAB_NOTE_LIMIT, postCodehostComment } from './codehost-comment';
import type { HttpOptions } from './http';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export { GITLAB_NOTE_LIMIT };

export async function postGitlabComment(request: DeliveryRequest, settings: CodehostSettings, http: Omit<HttpOptions, 'api'>): Promise<DeliveryOutcome> {
  return postCodehostComment(request, { gitlab: settings }, http);
}
