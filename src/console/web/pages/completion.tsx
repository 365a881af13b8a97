/**
 * Completing an order in the street: the completion form (note, materials from the
 * city's list, after-repair photos), the completion waiting to be sent when made without
 * a connection ("pendente de envio"), and what was recorded (materials and photos),
 * shown on the order's page and on its alerts' pages. The materials list itself is
 * kept by the city's administrators (MaterialsSection, on the teams page).
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { call, useApi, type types } from '../api.js';
import { useAction, useFeedback } from '../feedback.js';
import { useI18n, type MessageKey } from '../i18n.js';
import { useSession } from '../session.js';
import { Badge, Choice, LoadError, Loading, Table } from '../ui.js';
import { photoUrl } from '../offline/cache.js';
import { discard, enqueue, flush, shrinkPhoto, useQueuedCompletion, type QueuedCompletion, type QueuedPhoto } from '../offline/outbox.js';

const KINDS: types.MaterialKind[] = ['lamp', 'driver', 'reactor', 'photocell', 'other'];

function useKindWord() {
  const { t } = useI18n();
  return (kind: types.MaterialKind) => t(`completion.kind.${kind}` as MessageKey);
}

/** The order page's completion area: what waits to be sent, the form, and what was recorded. */
export function OrderCompletion({ order: o, onChanged }: { order: types.AdminServiceOrder; onChanged: () => void }) {
  const { can } = useSession();
  const queued = useQueuedCompletion(o.id, onChanged);
  const completable = (o.status === 'ASSIGNED' || o.status === 'IN_PROGRESS') && can('triage', o.tenantId);
  return (
    <>
      {queued ? <QueuedPanel entry={queued} tenantId={o.tenantId} /> : completable ? <CompletionForm order={o} /> : null}
      <CompletionRecord orderId={o.id} version={o.updatedAt} />
    </>
  );
}

function CompletionForm({ order: o }: { order: types.AdminServiceOrder }) {
  const { t } = useI18n();
  const feedback = useFeedback();
  const kindWord = useKindWord();
  const materials = useApi('listMaterials', { path: { tenantId: o.tenantId } });
  const [note, setNote] = useState('');
  const [choice, setChoice] = useState('');
  const [quantity, setQuantity] = useState('1');
  const [picked, setPicked] = useState<{ materialId: string; quantity: number }[]>([]);
  const [photos, setPhotos] = useState<(QueuedPhoto & { url: string })[]>([]);
  const [busy, setBusy] = useState(false);
  const byId = useMemo(() => new Map((materials.data?.items ?? []).map((m) => [m.id, m])), [materials.data]);
  useEffect(() => () => photos.forEach((p) => URL.revokeObjectURL(p.url)), []);

  const add = () => {
    const n = Number(quantity);
    if (!choice || !Number.isInteger(n) || n < 1 || n > 1000) return;
    setPicked((list) => (list.some((m) => m.materialId === choice) ? list.map((m) => (m.materialId === choice ? { ...m, quantity: Math.min(1000, m.quantity + n) } : m)) : [...list, { materialId: choice, quantity: n }]));
    setChoice('');
    setQuantity('1');
  };
  const addPhotos = async (files: FileList | null) => {
    for (const file of Array.from(files ?? []).slice(0, 20 - photos.length)) {
      try {
        const small = await shrinkPhoto(file);
        setPhotos((list) => [...list, { id: crypto.randomUUID(), ...small, url: URL.createObjectURL(small.data) }]);
      } catch {
        feedback.error(new Error(t('completion.photo.unreadable', { name: file.name })));
      }
    }
  };
  const submit = async () => {
    setBusy(true);
    const entry: QueuedCompletion = {
      completionId: crypto.randomUUID(),
      orderId: o.id,
      orderNumber: o.number,
      tenantId: o.tenantId,
      note: note.trim(),
      materials: picked,
      photos: photos.map(({ id, contentType, data }) => ({ id, contentType, data })),
      queuedAt: new Date().toISOString(),
    };
    try {
      // Kept on the phone first: a connection lost halfway sends it again, once.
      await enqueue(entry);
      const sent = navigator.onLine ? await flush() : [];
      feedback.ok(sent.includes(o.id) ? t('order.completed') : t('completion.queued'));
    } catch (err) {
      feedback.error(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel" data-testid="completion-form">
      <h2>{t('completion.title')}</h2>
      <label>
        <span>{t('completion.note')}</span>
        <textarea rows={3} maxLength={500} value={note} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} data-testid="completion-note" />
      </label>
      <fieldset class="plain-fieldset">
        <legend>{t('completion.materials')}</legend>
        {materials.error ? <LoadError error={materials.error} retry={() => void materials.mutate()} /> : null}
        {materials.data && materials.data.items.length === 0 ? <p class="muted small">{t('completion.materials.none')}</p> : null}
        {materials.data && materials.data.items.length > 0 ? (
          <div class="row">
            <label class="grow">
              <span>{t('completion.material')}</span>
              <select value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)} data-testid="completion-material">
                <option value="">—</option>
                {KINDS.map((kind) => {
                  const items = materials.data!.items.filter((m) => m.kind === kind);
                  return items.length ? (
                    <optgroup key={kind} label={kindWord(kind)}>
                      {items.map((m) => (
                        <option key={m.id} value={m.id}>
                          {m.name}
                        </option>
                      ))}
                    </optgroup>
                  ) : null;
                })}
              </select>
            </label>
            <label class="narrow">
              <span>{t('completion.quantity')}</span>
              <input type="number" inputMode="numeric" min={1} max={1000} value={quantity} onInput={(e) => setQuantity((e.target as HTMLInputElement).value)} data-testid="completion-quantity" />
            </label>
            <button type="button" class="secondary" disabled={!choice} onClick={add} data-testid="completion-add-material">
              {t('completion.material.add')}
            </button>
          </div>
        ) : null}
        {picked.length ? (
          <ul class="plain" data-testid="completion-picked">
            {picked.map((m) => (
              <li key={m.materialId} class="row">
                <span>{t('completion.material.line', { quantity: m.quantity, name: byId.get(m.materialId)?.name ?? '' })}</span>
                <button type="button" class="secondary small" onClick={() => setPicked((list) => list.filter((x) => x.materialId !== m.materialId))}>
                  {t('completion.remove')}
                </button>
              </li>
            ))}
          </ul>
        ) : null}
      </fieldset>
      <fieldset class="plain-fieldset">
        <legend>{t('completion.photos')}</legend>
        <label class="file-pick">
          <span>{t('completion.photos.add')}</span>
          <input type="file" accept="image/jpeg,image/png,image/webp" capture="environment" multiple onChange={(e) => void addPhotos((e.target as HTMLInputElement).files).then(() => ((e.target as HTMLInputElement).value = ''))} data-testid="completion-photos" />
        </label>
        {photos.length ? (
          <div class="photo-thumbs" data-testid="completion-photo-list">
            {photos.map((p, i) => (
              <figure key={p.id}>
                <img src={p.url} alt={t('completion.photo.alt', { n: i + 1 })} />
                <button type="button" class="secondary small" onClick={() => setPhotos((list) => list.filter((x) => x.id !== p.id))}>
                  {t('completion.remove')}
                </button>
              </figure>
            ))}
          </div>
        ) : null}
      </fieldset>
      <p class="muted small">{t('completion.partnerNote')}</p>
      <button type="button" disabled={busy} onClick={() => void submit()} data-testid="completion-submit">
        {t('completion.submit')}
      </button>
    </section>
  );
}

/** A completion made on this phone and not yet accepted by the server. */
function QueuedPanel({ entry, tenantId }: { entry: QueuedCompletion; tenantId: string }) {
  const { t, dateTime } = useI18n();
  const materials = useApi('listMaterials', { path: { tenantId } });
  const names = new Map((materials.data?.items ?? []).map((m) => [m.id, m.name]));
  const urls = useMemo(() => entry.photos.map((p) => URL.createObjectURL(p.data)), [entry.completionId]);
  useEffect(() => () => urls.forEach((u) => URL.revokeObjectURL(u)), [urls]);
  const send = useAction(
    () => flush(),
    () => undefined,
  );
  const drop = useAction(
    () => discard(entry.completionId),
    () => t('completion.discarded'),
  );
  return (
    <section class="panel pending-panel" data-testid="completion-pending" role="status" tabIndex={-1}>
      <h2>{t('completion.title')}</h2>
      {entry.refused ? (
        <>
          <p>
            <Badge kind="danger">{t('completion.refused')}</Badge>
          </p>
          <p>
            {entry.refused.title}: {entry.refused.detail}
          </p>
        </>
      ) : (
        <>
          <p>
            <Badge kind="warn">{t('completion.pending')}</Badge>
          </p>
          <p>{t('completion.pending.detail', { when: dateTime(entry.queuedAt) })}</p>
        </>
      )}
      {entry.note ? <p class="quote">{entry.note}</p> : null}
      {entry.materials.length ? (
        <ul class="plain">
          {entry.materials.map((m) => (
            <li key={m.materialId}>{t('completion.material.line', { quantity: m.quantity, name: names.get(m.materialId) ?? '' })}</li>
          ))}
        </ul>
      ) : null}
      {urls.length ? (
        <div class="photo-thumbs">
          {urls.map((u, i) => (
            <figure key={u}>
              <img src={u} alt={t('completion.photo.alt', { n: i + 1 })} />
            </figure>
          ))}
        </div>
      ) : null}
      <div class="row">
        {entry.refused ? (
          <button type="button" class="danger" disabled={drop.busy} onClick={() => void drop.run()} data-testid="completion-discard">
            {t('completion.discard')}
          </button>
        ) : (
          <button type="button" class="secondary" disabled={send.busy} onClick={() => void send.run()} data-testid="completion-send-now">
            {t('completion.sendNow')}
          </button>
        )}
      </div>
    </section>
  );
}

/** What was recorded with the order's completion, and its photos (the order's page and its alerts' pages). */
export function CompletionRecord({ orderId, version }: { orderId: string; version?: string }) {
  const { t, dateTime } = useI18n();
  const record = useApi('getServiceOrderCompletion', { path: { serviceOrderId: orderId } });
  useEffect(() => {
    if (version) void record.mutate();
  }, [version]);
  if (record.error) return <LoadError error={record.error} retry={() => void record.mutate()} />;
  if (!record.data) return null;
  const { completion, photos } = record.data;
  if (!completion && photos.length === 0) return null;
  return (
    <section class="panel" data-testid="completion-record">
      <h2>{t('completion.recorded')}</h2>
      {completion ? (
        <p class="muted small wrap-anywhere">{t('completion.recorded.by', { who: completion.completedBy.replace(/^(operator|admin-token|cli):/, ''), when: dateTime(completion.completedAt) })}</p>
      ) : null}
      {completion?.note ? <p class="quote">{completion.note}</p> : null}
      {completion?.materials.length ? (
        <ul class="plain" data-testid="completion-materials">
          {completion.materials.map((m) => (
            <li key={m.material.id}>{t('completion.material.line', { quantity: m.quantity, name: m.material.name })}</li>
          ))}
        </ul>
      ) : null}
      {photos.length ? (
        <div class="photos" data-testid="completion-photos-shown">
          {photos.map((p, i) => (
            <a key={p.id} href={photoUrl(orderId, p.id)} target="_blank" rel="noopener">
              <img src={photoUrl(orderId, p.id)} alt={t('completion.photo.alt', { n: i + 1 })} loading="lazy" />
            </a>
          ))}
        </div>
      ) : null}
    </section>
  );
}

/** The city's list of materials: every role reads it; a city-admin adds, renames, retires and restores. */
export function MaterialsSection() {
  const { t } = useI18n();
  const { tenantId, can } = useSession();
  const kindWord = useKindWord();
  const list = useApi('listMaterials', { path: { tenantId }, query: { includeRetired: 'true' } });
  const [kind, setKind] = useState<types.MaterialKind>('lamp');
  const [name, setName] = useState('');
  const [wattage, setWattage] = useState('');
  const create = useAction(
    () => call('createMaterial', { path: { tenantId }, body: { kind, name: name.trim(), ...(wattage ? { wattage: Number(wattage) } : {}) } }),
    () => {
      setName('');
      setWattage('');
      void list.mutate();
      return t('materials.created');
    },
  );
  const toggle = useAction(
    (m: types.Material) => call('updateMaterial', { path: { tenantId, materialId: m.id }, body: { active: !m.active } }),
    (m) => {
      void list.mutate();
      return m.active ? t('materials.restored') : t('materials.retired');
    },
  );
  const admin = can('administer');
  return (
    <section class="panel" data-testid="materials">
      <h2>{t('materials.title')}</h2>
      <p class="muted small">{t('materials.intro')}</p>
      {list.error ? <LoadError error={list.error} /> : null}
      {!list.data && !list.error ? <Loading /> : null}
      {list.data && list.data.items.length === 0 ? <p class="muted">{t('materials.empty')}</p> : null}
      {list.data && list.data.items.length > 0 ? (
        <Table testid="materials-table" headers={[t('materials.kind'), t('col.name'), t('materials.wattage'), t('materials.state'), ...(admin ? [{ hidden: t('materials.actions') }] : [])]}>
          {list.data.items.map((m) => (
            <tr key={m.id}>
              <td data-label={t('materials.kind')}>{kindWord(m.kind)}</td>
              <td data-label={t('col.name')}>{m.name}</td>
              <td data-label={t('materials.wattage')}>{m.wattage === null ? '—' : t('materials.watts', { n: m.wattage })}</td>
              <td data-label={t('materials.state')}>{m.active ? <Badge kind="ok">{t('materials.active')}</Badge> : <Badge kind="warn">{t('materials.retiredState')}</Badge>}</td>
              {admin ? (
                <td>
                  <button type="button" class="secondary small" disabled={toggle.busy} onClick={() => void toggle.run(m)}>
                    {m.active ? t('materials.retire') : t('materials.restore')}
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      ) : null}
      {admin ? (
        <form
          class="row"
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <label>
            <span>{t('materials.kind')}</span>
            <Choice value={kind} onChange={setKind} options={KINDS.map((k) => ({ value: k, label: kindWord(k) }))} testid="material-kind" />
          </label>
          <label class="grow">
            <span>{t('materials.new')}</span>
            <input value={name} required maxLength={120} onInput={(e) => setName((e.target as HTMLInputElement).value)} data-testid="material-name" />
          </label>
          <label class="narrow">
            <span>{t('materials.wattage')}</span>
            <input type="number" inputMode="numeric" min={1} max={10000} value={wattage} onInput={(e) => setWattage((e.target as HTMLInputElement).value)} data-testid="material-wattage" />
          </label>
          <button type="submit" disabled={create.busy || !name.trim()} data-testid="material-save">
            {t('materials.save')}
          </button>
        </form>
      ) : null}
    </section>
  );
}
