/** `codehost_comment` on GitHub: an issue/PR comment (sticky or new), or a commit comment for pushes. */
import type { CodehostSettings } from '../config/types';
import { GITHUB_COMMENT_LIMIT, postCodehostComment } from './codehost-comment';
import type { HttpOptions } from './http';
import type { DeliveryOutcome, DeliveryRequest } from './target';

export { GITHUB_COMMENT_LIMIT };

export async function postGithubComment(request: DeliveryRequest, settings: CodehostSettings, http: Omit<HttpOptions, 'api'>): Promise<DeliveryOutcome> {
  return postCodehostComment(request, { github: settings }, http);
}
