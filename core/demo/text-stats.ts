/**
 * The demo's text statistics (core/demo/demo-apis.ts): words, sentences and paragraphs by Unicode segmentation
 * (Intl.Segmenter, so any script counts correctly), reading and speaking time, the most frequent words. Pure.
 */

const words = new Intl.Segmenter('en', { granularity: 'word' });
const sentences = new Intl.Segmenter('en', { granularity: 'sentence' });

/** Common English words left out of `top_words` (they would top every list). */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by for from has have he her his i if in into is it its me my not of on or our she so ' +
    'that the their them then there these they this to was we were what when which who will with you your'
  ).split(' '),
);

/** Adult silent reading and presentation speaking rates, words per minute. */
const READING_WPM = 238;
const SPEAKING_WPM = 150;

function wordList(text: string): string[] {
  const out: string[] = [];
  for (const s of words.segment(text)) if (s.isWordLike) out.push(s.segment);
  return out;
}

export function wordCount(text: string): { words: number; characters: number } {
  return { words: wordList(text).length, characters: [...text].length };
}

export interface TextStats {
  characters: number;
  characters_excluding_spaces: number;
  words: number;
  unique_words: number;
  sentences: number;
  paragraphs: number;
  average_word_length: number;
  longest_word: string | null;
  reading_time_seconds: number;
  speaking_time_seconds: number;
  top_words: { word: string; count: number }[];
}

export function analyze(text: string, top = 5): TextStats {
  const list = wordList(text);
  const counts = new Map<string, number>();
  let letters = 0;
  let longest: string | null = null;
  for (const w of list) {
    const key = w.toLowerCase();
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const length = [...w].length;
    letters += length;
    if (longest === null || length > [...longest].length) longest = w;
  }
  let sentenceCount = 0;
  for (const s of sentences.segment(text)) if (s.segment.trim() !== '') sentenceCount++;
  const topWords = [...counts]
    .filter(([w]) => !STOP_WORDS.has(w))
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, top)
    .map(([word, count]) => ({ word, count }));
  return {
    characters: [...text].length,
    characters_excluding_spaces: [...text.replace(/\s/gu, '')].length,
    words: list.length,
    unique_words: counts.size,
    sentences: sentenceCount,
    paragraphs: text.split(/\n\s*\n/u).filter((p) => p.trim() !== '').length,
    average_word_length: list.length === 0 ? 0 : Math.round((letters / list.length) * 100) / 100,
    longest_word: longest,
    reading_time_seconds: Math.ceil((list.length / READING_WPM) * 60),
    speaking_time_seconds: Math.ceil((list.length / SPEAKING_WPM) * 60),
    top_words: topWords,
  };
}
