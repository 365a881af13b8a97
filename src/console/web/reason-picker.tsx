/**
 * The reason picker: one field that finds a city's reason by part of its name or code
 * (every word typed, accents and case ignored), used wherever an operator chooses a reason. A combobox
 * (WAI-ARIA 1.2 pattern): type to filter, ArrowDown/ArrowUp to move, Enter to choose,
 * Escape to close; a mouse click chooses too. The chosen reason reads "Name (CODE)".
 */
import { useId, useRef, useState } from 'preact/hooks';
import { useApi, type types } from './api.js';
import { useI18n } from './i18n.js';

/** Lower case without accents: "Lâmpada" is found by "lampada". */
export function folded(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

export function ReasonPicker({
  tenantId,
  value,
  onChange,
  emptyLabel,
  testid,
  label,
  hideLabel = false,
  inputRef,
}: {
  tenantId: string;
  /** The chosen reason's code; '' for none. */
  value: string;
  onChange: (code: string) => void;
  /** What "no reason chosen" means here (shown as the first option and the placeholder). */
  emptyLabel: string;
  testid: string;
  label: string;
  /** The label for screen readers only (a table column already names the field). Default false. */
  hideLabel?: boolean;
  inputRef?: { current: HTMLInputElement | null };
}) {
  const { t, lang } = useI18n();
  const reasons = useApi('listReasons', { path: { tenantId } });
  const id = useId();
  const [text, setText] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const own = useRef<HTMLInputElement | null>(null);
  const name = (r: types.Reason) => (lang === 'en' ? r.nameEn : r.namePt);
  const all = reasons.data?.items ?? [];
  const chosen = all.find((r) => r.code === value);
  const shown = text ?? (chosen ? `${name(chosen)} (${chosen.code})` : value);
  // Every word typed is somewhere in the names or the code ("outros sist" finds "Outros (sistema externo)").
  const words = folded(text ?? '').split(/\s+/).filter(Boolean);
  const matches = words.length > 0 ? all.filter((r) => words.every((w) => folded(`${name(r)} ${r.namePt} ${r.nameEn} ${r.code}`).includes(w))) : all;
  // The empty choice first, then the reasons found.
  const options: { code: string; label: string }[] = [{ code: '', label: emptyLabel }, ...matches.map((r) => ({ code: r.code, label: `${name(r)} (${r.code})` }))];
  const choose = (code: string) => {
    onChange(code);
    setText(null);
    setOpen(false);
  };
  const at = Math.min(active, options.length - 1);
  return (
    <div class="reason-picker" data-testid={testid}>
      <label>
        <span class={hideLabel ? 'sr-only' : undefined}>{label}</span>
        <input
        id={`${id}-input`}
        ref={(el) => {
          own.current = el;
          if (inputRef) inputRef.current = el;
        }}
        type="text"
        role="combobox"
        autocomplete="off"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={`${id}-list`}
        aria-activedescendant={open ? `${id}-opt-${at}` : undefined}
        placeholder={t('reasonPicker.placeholder')}
        value={shown}
        onFocus={(e) => (e.target as HTMLInputElement).select()}
        onInput={(e) => {
          setText((e.target as HTMLInputElement).value);
          setActive(1);
          setOpen(true);
        }}
        onKeyDown={(e) => {
          if (e.key === 'ArrowDown') {
            e.preventDefault();
            if (!open) setOpen(true);
            else setActive(Math.min(at + 1, options.length - 1));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setActive(Math.max(at - 1, 0));
          } else if (e.key === 'Enter' && open) {
            e.preventDefault();
            // Words typed that match no reason (or the city's reasons not loaded yet):
            // Enter keeps the list open rather than choosing "no reason" in their place.
            if (words.length > 0 && matches.length === 0) return;
            const o = options[at];
            if (o) choose(o.code);
          } else if (e.key === 'Escape' && open) {
            e.preventDefault();
            e.stopPropagation();
            setText(null);
            setOpen(false);
          }
        }}
        onBlur={() => {
          // A click on an option lands before the blur ends the list (mousedown is prevented there).
          setText(null);
          setOpen(false);
        }}
        data-testid={`${testid}-input`}
        />
      </label>
      {open ? (
        <ul class="reason-options" role="listbox" id={`${id}-list`} aria-label={label}>
          {options.map((o, i) => (
            <li
              key={o.code || '-'}
              id={`${id}-opt-${i}`}
              role="option"
              aria-selected={i === at}
              class={i === at ? 'active' : ''}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => choose(o.code)}
            >
              {o.label}
            </li>
          ))}
          {matches.length === 0 ? (
            <li class="muted" role="presentation">
              {t('reasonPicker.none')}
            </li>
          ) : null}
        </ul>
      ) : null}
    </div>
  );
}
