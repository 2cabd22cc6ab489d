/*
 * The built-in text corpus: filler text for generation configs that name no `text_files`. It is original prose
 * written for chatload (no third-party text), a few kilobytes of varied English. The generator walks its token
 * stream and wraps around at the end, so a small corpus is enough for any number of conversations (the texts then
 * repeat, which only matters for servers that cache across conversations by content, and the per-conversation
 * header still keeps conversations apart).
 */

const PARAGRAPHS = [
  'The harbour town woke before the sun. Fishing boats slid out past the breakwater one by one, their lamps swinging, while the bakery on the corner pushed warm air and the smell of bread into the narrow street. Nobody hurried, yet everything seemed to happen at once: gulls argued over the nets, a cart rattled down to the quay, and the first ferry sounded its horn twice, as it had every morning for forty years.',
  'Mara kept the lighthouse logbook in a careful hand. Each entry noted the wind, the state of the sea, the ships that passed and anything else she thought a stranger might one day want to know. On calm nights she added small observations of her own: the colour of the water after rain, the way the beam caught a drifting feather, the hour at which the last window in the village went dark.',
  'A good engineer, her teacher used to say, measures before she argues. He would set two machines side by side, run them until they were warm, and only then write down a number. Numbers taken too early, he explained, describe the start of the experiment rather than the thing itself. The students laughed at his patience at first, and later copied it without noticing.',
  'The river changed its mind every spring. Where it had run straight the year before it now curled around a new bank of gravel, and the ferryman had to learn the crossing again. He did not complain. He said that a river which never surprised you was a canal, and that he had not become a ferryman to steer along canals.',
  'In the library the afternoon light came in at a low angle and lay across the long tables like a second tablecloth. Readers moved their books to follow it. A boy working through a history of bridges stopped to sketch an arch in the margin of his notebook, then another, each a little flatter than the last, until he had drawn the exact curve that failed.',
  'Planning a long walk is mostly planning water and shade. The map shows the hills honestly but says nothing about the heat that gathers in a valley at two in the afternoon, or the spring that dried up three summers ago. Experienced walkers carry more than they expect to need, start earlier than feels reasonable, and rest before they are tired.',
  'The market opened with a clatter of folding tables. One stall sold nothing but keys, hundreds of them on rings and hooks, most of which no longer opened anything at all. The owner claimed that people bought them for luck, or for the shapes, or because a key without a lock is a small promise that some door, somewhere, is still waiting.',
  'When the storm finally reached the coast it came quietly, as rain that thickened hour by hour rather than as wind. By evening the roads were streams and the fields were ponds with fences standing in them. The neighbours checked on each other in turn, carrying sandbags, candles and a pot of soup that travelled from house to house and never seemed to empty.',
  'Learning a new language felt, for the first months, like walking through a house with the lights off. She knew the rooms were there, could feel the shape of a sentence around her, but kept bumping into furniture. Then one morning she understood a joke on the radio before she had translated it, and the lights came on in one room after another.',
  'The old clock in the station had stopped at twenty past nine, and the town had decided, after some debate, not to repair it. Travellers asked about it constantly. The stationmaster answered each of them the same way: the trains kept their own time, the clock kept its own memory, and both, in their fashion, were perfectly accurate.',
  'Good soup begins the day before. Onions are softened slowly until they turn sweet, bones are simmered for hours, and the pot rests overnight so the flavours can settle into one another. The cook who rushes this work can still make a meal, but never quite the same meal, and the difference is exactly the time that was saved.',
  'At the edge of the forest the path split three ways, each marked by a wooden sign so weathered that the words had become suggestions. Walkers chose by the light, by the slope, or by the sound of water somewhere ahead. Most of them, whichever way they took, arrived by dusk at the same small inn, and argued over dinner about which path had been the shortest.',
];

/** The built-in corpus as one text (paragraphs separated by blank lines). */
export const BUILTIN_CORPUS: string = PARAGRAPHS.join('\n\n');
