import { render } from 'preact';
import { App, startRequests } from './app';
// All CSS is here, in the first page's one style sheet: a page in a chunk of
// its own (metrics, the service map) gets no style sheet of its own, since
// nothing would load it (uPlot's comes here rather than with the chart).
import 'uplot/dist/uPlot.min.css';
import './styles.css';

startRequests();
render(<App />, document.getElementById('app')!);
