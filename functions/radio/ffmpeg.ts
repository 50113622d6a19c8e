/**
 * The `ffmpeg` helper block of a created stream: commands a DJ can paste, with `INPUT` to replace. H.264 + AAC in
 * FLV over RTMPS with a keyframe every 2 s, as Mux asks of encoders. An audio-only source (a mix from a sound card or
 * a file) gets a still black picture, since the live stream carries video.
 */
export function ffmpegHelper(fullRtmpUrl: string) {
  const out = `-f flv "${fullRtmpUrl}"`
  return {
    rtmpUrl: fullRtmpUrl,
    video: `ffmpeg -re -i INPUT -c:v libx264 -preset veryfast -b:v 3000k -maxrate 3000k -bufsize 6000k -pix_fmt yuv420p -g 60 -keyint_min 60 -c:a aac -b:a 160k -ar 48000 ${out}`,
    audioOnly:
      'ffmpeg -re -i INPUT -f lavfi -i color=c=black:s=1280x720:r=30 -map 1:v -map 0:a -shortest ' +
      `-c:v libx264 -preset veryfast -tune stillimage -b:v 500k -pix_fmt yuv420p -g 60 -keyint_min 60 -c:a aac -b:a 192k -ar 48000 ${out}`,
    notes: [
      'Replace INPUT with a file, a capture device (e.g. -f pulse -i default) or another stream.',
      '-re paces a file at real time; drop it for a live device.',
      'The stream key is in these commands: keep them private.',
      'The session ends by itself when it expires: end it earlier with DELETE /api/radio/streams/:id.',
    ],
  }
}
