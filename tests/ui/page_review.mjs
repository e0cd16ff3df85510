// What every browser test does with a page it has brought up: a screenshot
// in each theme for people to review, and an axe-core accessibility check
// in each theme that fails the test on any serious or critical violation
// (WCAG 2.x A and AA rules, colour contrast included).
//
// axe-core is evaluated through the DevTools protocol (page.evaluate), which
// the page's Content-Security-Policy does not govern, so the policy stays
// as strict in the tests as in production.

import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const shots = process.env.STRATA_UI_SCREENSHOTS ?? 'build/ui-screenshots';
mkdirSync(shots, { recursive: true });

// One line per violation: rule, impact, what it means and where.
function describe(violations) {
  return violations
    .map((v) => {
      const where = v.nodes
        .slice(0, 5)
        .map((node) => `    ${node.target.join(' ')}: ${node.failureSummary?.split('\n').join(' ')}`)
        .join('\n');
      return `  ${v.id} (${v.impact}): ${v.help}\n${where}`;
    })
    .join('\n');
}

// The serious and critical axe-core violations on `page` as it is now.
export async function accessibilityViolations(page) {
  const present = await page.evaluate(() => typeof window.axe !== 'undefined');
  if (!present) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const result = await window.axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations'],
    });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

// Screenshots `name` in both themes and checks it with axe-core in both;
// the page is left in the light theme.
export async function reviewPage(page, name) {
  const failures = [];
  for (const theme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme: theme });
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done())));
    await page.screenshot({ path: `${shots}/${name}-${theme}.png`, fullPage: true });
    const violations = await accessibilityViolations(page);
    if (violations.length > 0) failures.push(`${name} (${theme} theme):\n${describe(violations)}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(failures, [], `accessibility violations:\n${failures.join('\n')}`);
}
