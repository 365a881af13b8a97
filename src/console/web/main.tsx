import 'leaflet/dist/leaflet.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.js';
import { keepAnswers, registerWorker } from './offline/cache.js';
import { startOutbox } from './offline/outbox.js';

keepAnswers();
registerWorker();
startOutbox();
render(<App />, document.getElementById('app')!);
