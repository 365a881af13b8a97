import 'leaflet/dist/leaflet.css';
import './styles.css';
import { render } from 'preact';
import { App } from './app.js';

render(<App />, document.getElementById('app')!);
