/**
 * Hunt 12 D1: `${…}` references are checked on the parsed document, not on config.yaml's
 * raw text. A `${…}` in a comment is not configuration; a bad one in a value is named by
 * its key path (DESIGN §2.3 "every error names its key path") and reported with every
 * other error of the file in one run. Valid references work as before.
 */
import { invalid, valid } from '../support/parse-config';

const WRITE = 'write ${VAR_NAME} with letters, digits and underscores';
const HINT = `is not a valid reference; ${WRITE}`;

describe('a ${…} that is not configuration is ignored', () => {
  test('in a comment, a whole-line one or one after a value', () => {
    const config = valid([
      'webhooks:',
      '  # GitLab: the project token goes in ${GITLAB-TOKEN} (Settings > Access tokens)',
      '  max_payload_size: 1MB   # not ${this one} either, nor an unclosed ${',
      '#  public_url: https://${bad host}/',
      '',
    ].join('\n'));
    expect(config.webhooks.max_payload_size).toBe(1_048_576);
  });

  test('a ${ in one comment and a } in a later one are not one reference', () => {
    expect(valid('# set ${\nagent: { provider: echo }\n# } later\n').agent.provider).toBe('echo');
  });
});

describe('a bad reference in a value names its key path', () => {
  test.each([
    ['an empty name, quoted', 'webhooks: { public_url: "https://hooks.example.com/${}" }', 'webhooks.public_url', '${}'],
    ['a dash, in a flow mapping', 'webhooks:\n  github: { secret: ${not-a-name} }\n', 'webhooks.github.secret', '${not-a-name}'],
    ['a space, plain', 'agent:\n  provider: openai\n  model: m\n  base_url: https://${api host}/v1\n', 'agent.base_url', '${api host}'],
    ['a leading digit, in a block scalar', 'agent:\n  model: |\n    ${1MODEL}\n', 'agent.model', '${1MODEL}'],
  ])('%s', (_what, yaml, path, text) => {
    expect(invalid(yaml).issues).toEqual([{ path, message: `${text} ${HINT}` }]);
  });

  test('in a nested list item, by its index', () => {
    expect(invalid('webhooks:\n  github:\n    secret:\n      - ${OLD}\n      - ${new-one}\n').issues)
      .toEqual([{ path: 'webhooks.github.secret[1]', message: `\${new-one} ${HINT}` }]);
    expect(invalid('agent:\n  http:\n    allow:\n      - { prefix: https://a.test/, headers: { Authorization: "Bearer ${PROM-TOKEN}" } }\n').issues)
      .toEqual([{ path: 'agent.http.allow[0].headers.Authorization', message: `\${PROM-TOKEN} ${HINT}` }]);
  });

  test('an unterminated ${ in a value is refused: ${ always starts a reference', () => {
    expect(invalid('webhooks: { public_url: "https://${HOST/hooks" }').issues)
      .toEqual([{ path: 'webhooks.public_url', message: `\${HOST/hooks is not closed with }; ${WRITE}` }]);
    // A } on a later line does not close it.
    expect(invalid('agent:\n  model: |\n    ${MODEL\n    }\n').issues.map((i) => i.path)).toEqual(['agent.model']);
  });

  test('an alias repeats a bad reference: each key that uses it is named', () => {
    expect(invalid('webhooks: { public_url: &u "https://${bad host}/" }\nagent: { provider: openai, model: m, base_url: *u }\n').issues)
      .toEqual([
        { path: 'webhooks.public_url', message: `\${bad host} ${HINT}` },
        { path: 'agent.base_url', message: `\${bad host} ${HINT}` },
      ]);
  });

  test('a YAML error is still a YAML error with its line, beside a malformed reference or not', () => {
    const broken = 'webhooks: { github: { secret: ${GOOD} } }\nagent: [unclosed, { a: 1\n';
    const error = invalid(broken).issues;
    expect(error).toEqual([{ path: '', message: expect.stringMatching(/^config\.yaml is not valid YAML at line \d: /) }]);
    expect(invalid(broken.replace('${GOOD}', '${bad-x}')).issues).toEqual(error);
  });

  test('a long run of ${ is read once and shown cut short', () => {
    const issues = invalid(`webhooks: { public_url: "https://x.test/${'${'.repeat(200_000)}" }\n`).issues;
    expect(issues).toEqual([{ path: 'webhooks.public_url', message: expect.stringMatching(/^\$\{\$\{.{0,60}… is not closed with \}; /) }]);
  });

  test('$${…} is no escape: the ${…} in it is still a reference', () => {
    expect(invalid('webhooks: { public_url: "https://x.test/$${bad-name}" }').issues)
      .toEqual([{ path: 'webhooks.public_url', message: `\${bad-name} ${HINT}` }]);
    expect(valid('webhooks: { public_url: "https://x.test/$${HOST}" }').webhooks.public_url).toBe('https://x.test/$${HOST}');
  });

  test('a reference in a key is refused with the key path: references are replaced in values only', () => {
    const issue = { path: 'agent.http.allow[0].headers.${AUTH_HEADER}', message: 'a key cannot hold a reference (${…} is replaced in values only); write the key itself' };
    expect(invalid('agent: { http: { allow: [{ prefix: https://a.test/, headers: { ${AUTH_HEADER}: x } }] } }').issues).toEqual([issue]);
    // A key the schema does not know is named once, for its reference.
    expect(invalid('webhooks:\n  ${bad-key}: 1\n').issues).toEqual([{ path: 'webhooks.${bad-key}', message: issue.message }]);
  });

  test('keys come back as written: a __proto__ key is a key (an unknown one), not the prototype', () => {
    expect(invalid('__proto__: { webhooks: 1 }\n').issues).toEqual([{ path: '__proto__', message: expect.stringContaining('unknown key') }]);
  });

  test('several bad references and the schema, size and address errors, all in one run', () => {
    const error = invalid([
      'webhooks:',
      '  max_payload_size: 0',
      '  public_url: "https://hooks.example.com/${}"',
      '  allowed_ips: [10.0.0.0/8, "${bad ip}"]',
      '  github: { secret: [${OK}, ${bad-secret}] }',
      'agent:',
      '  provider: nope',
      '  model: ${model.name}',
      '',
    ].join('\n'));
    expect(error.issues).toEqual(expect.arrayContaining([
      { path: 'webhooks.public_url', message: `\${} ${HINT}` },
      { path: 'webhooks.allowed_ips[1]', message: `\${bad ip} ${HINT}` },
      { path: 'webhooks.github.secret[1]', message: `\${bad-secret} ${HINT}` },
      { path: 'agent.model', message: `\${model.name} ${HINT}` },
      { path: 'agent.provider', message: 'must be one of: echo, bedrock, openai, anthropic' },
      { path: 'webhooks.max_payload_size', message: expect.stringContaining('must be a size') },
    ]));
    // One issue per key: the bad address and the inline-secret check do not name them again.
    expect(error.issues).toHaveLength(6);
    expect(error.message).not.toMatch(/line \d/);
  });
});

describe('valid references work as before', () => {
  test('quoted, block, flow, list and aliased values keep their ${NAME}', () => {
    const config = valid([
      'webhooks:',
      '  github: { secret: [${OLD}, ${NEW}] }',
      '  gitlab:',
      '    secret: &gl ${GITLAB_SECRET}',
      '  public_url: "https://${HOST}/p?a=$${X}"',
      'agent:',
      '  provider: openai',
      "  model: 'm-${MODEL_SUFFIX}'",
      '  base_url: >-',
      '    https://${API_HOST}/v1',
      '  api_key: ${OPENAI_API_KEY}   # ${ignored-comment}',
      '  http: { allow: [{ prefix: https://a.test/, headers: { Authorization: "Bearer ${PROM_TOKEN}", X-Other: *gl } }] }',
      '',
    ].join('\n'));
    expect(config.webhooks.github?.secret).toEqual(['${OLD}', '${NEW}']);
    expect(config.webhooks.gitlab?.secret).toEqual(['${GITLAB_SECRET}']);
    expect(config.webhooks.public_url).toBe('https://${HOST}/p?a=$${X}');
    expect(config.agent).toMatchObject({ model: 'm-${MODEL_SUFFIX}', base_url: 'https://${API_HOST}/v1', api_key: '${OPENAI_API_KEY}' });
    expect(config.agent.http?.allow[0]?.headers).toEqual({ Authorization: 'Bearer ${PROM_TOKEN}', 'X-Other': '${GITLAB_SECRET}' });
  });
});
