// The SQL editor (CodeMirror 6), in its own chunk: only the SQL page loads
// it. It lives in a shadow root: there CodeMirror adds its styles as
// constructable style sheets, which the page's Content-Security-Policy
// allows, instead of the <style> element it adds to a document (which
// `style-src 'self'` refuses). Colours come from the page's CSS variables,
// which reach into the shadow root.

import type { CompletionContext, CompletionResult } from '@codemirror/autocomplete';
import { sql, SQLite } from '@codemirror/lang-sql';
import { basicSetup, EditorView } from 'codemirror';
import { keymap } from '@codemirror/view';
import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags } from '@lezer/highlight';
import { SQL_HELPERS } from '../lib/sql_helpers';

// Token colours from the theme palette (styles.css, --syntax-*), so both
// themes keep readable contrast; CSS variables reach into the shadow root.
const highlightStyle = HighlightStyle.define([
  { tag: [tags.keyword, tags.operatorKeyword, tags.modifier], color: 'var(--syntax-keyword)' },
  { tag: [tags.string, tags.special(tags.string)], color: 'var(--syntax-string)' },
  { tag: [tags.number, tags.bool, tags.null], color: 'var(--syntax-number)' },
  { tag: [tags.typeName, tags.function(tags.variableName), tags.standard(tags.name)], color: 'var(--syntax-name)' },
  { tag: [tags.comment, tags.lineComment, tags.blockComment], color: 'var(--syntax-comment)', fontStyle: 'italic' },
]);

// strata's helpers as completions beside the views' columns: a helper's
// name, its type, what it reads, inserted with its key's quotes.
function helperCompletions(context: CompletionContext): CompletionResult | null {
  const word = context.matchBefore(/\w+/);
  if (word === null && !context.explicit) return null;
  return {
    from: word?.from ?? context.pos,
    options: SQL_HELPERS.map((helper) => ({
      label: helper.name,
      type: 'function',
      detail: helper.type,
      info: helper.info,
      apply: `${helper.name}('')`,
    })),
    validFor: /^\w*$/,
  };
}

export interface Editor {
  text(): string;
  destroy(): void;
}

// `schema`: each view's columns, for completion.
export function createEditor(
  parent: HTMLElement,
  initial: string,
  run: () => void,
  schema: Record<string, string[]>,
): Editor {
  const shadow = parent.shadowRoot ?? parent.attachShadow({ mode: 'open' });
  const mount = document.createElement('div');
  shadow.replaceChildren(mount);
  const view = new EditorView({
    doc: initial,
    root: shadow,
    parent: mount,
    extensions: [
      keymap.of([{ key: 'Mod-Enter', run: () => (run(), true) }]),
      basicSetup,
      syntaxHighlighting(highlightStyle),
      sql({ dialect: SQLite, schema, upperCaseKeywords: true }),
      SQLite.language.data.of({ autocomplete: helperCompletions }),
      EditorView.contentAttributes.of({ 'aria-label': 'SQL' }),
      EditorView.theme({
        '&': { backgroundColor: 'var(--bg)', color: 'var(--fg)', borderRadius: '8px' },
        '.cm-gutters': { backgroundColor: 'var(--panel)', color: 'var(--muted)', borderRight: '1px solid var(--line)' },
        '.cm-content': { caretColor: 'var(--fg)', fontFamily: "ui-monospace, 'SFMono-Regular', Menlo, monospace" },
        '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: 'var(--panel)' },
      }),
    ],
  });
  return { text: () => view.state.doc.toString(), destroy: () => view.destroy() };
}
